"""The captcha on asking for a sign-in code, as on the other mail-sending endpoints: asked every
time (when captcha is on), on the v2 API and the hosted page, before any mail is promised."""

from __future__ import annotations

from typing import Any

from tests.support.accounts import Account
from tests.support.apps import Mailbox
from tests.support.captcha_standin import (
    captcha_app_settings,  # noqa: F401 (its settings)
    fresh_token,
)
from tests.support.pages import submit

FIELD = "cf-turnstile-response"


def test_the_api_asks_for_a_captcha(client: Any, user: Account, mailbox: Mailbox) -> None:
    refused = client.post("/api/v2/auth/email-code", json={"email": user.email})
    assert refused.status_code == 422 and refused.get_json()["code"] == "captcha_required"
    wrong = client.post("/api/v2/auth/email-code",
                        json={"email": user.email, "captcha_token": fresh_token("fail")})
    assert wrong.status_code == 422 and wrong.get_json()["code"] == "captcha_invalid"
    assert mailbox.messages == []
    passed = client.post("/api/v2/auth/email-code",
                         json={"email": user.email, "captcha_token": fresh_token()})
    assert passed.status_code == 202
    assert len(mailbox.to(user.email)) == 1


def test_the_hosted_page_shows_the_widget_and_asks_for_it(client: Any, user: Account,
                                                          mailbox: Mailbox) -> None:
    page = client.get("/login/email-code")
    assert 'class="cf-turnstile" data-sitekey="stand-in-site-key"' in page.text
    refused = submit(client, "/login/email-code", {"email": user.email})
    assert refused.status_code == 422 and "Confirm that you are a person" in refused.text
    assert mailbox.messages == []
    passed = submit(client, "/login/email-code", {"email": user.email, FIELD: fresh_token()})
    assert passed.status_code == 302
    assert len(mailbox.to(user.email)) == 1
