"""ui_locales (OpenID Connect Core §3.1.2.1) comes first: on /oauth2/authorize and on the hosted
pages while its authorization waits, before the picker's cookie and Accept-Language."""

from __future__ import annotations

import pytest

from tests.support.oidc import authorize_query, pkce
from tests.unit.pages.test_language import lang_of

pytestmark = pytest.mark.app_settings("oidc")


def test_ui_locales_picks_the_language_of_the_authorizations_pages(client):
    client.set_cookie("svc_lang", "de")
    started = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), ui_locales="ja fr-CA de"))
    assert started.status_code == 302 and started.headers["Location"].startswith("/login")
    headers = {"Accept-Language": "es"}
    assert lang_of(client.get(started.headers["Location"], headers=headers)) == "fr"
    assert lang_of(client.get("/signup", headers=headers)) == "fr"


def test_without_ui_locales_the_authorization_keeps_the_browsers_language(client):
    started = client.get("/oauth2/authorize", query_string=authorize_query(verifier=pkce()))
    page = client.get(started.headers["Location"], headers={"Accept-Language": "de"})
    assert lang_of(page) == "de"
