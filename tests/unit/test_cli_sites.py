"""`flask sites` (app/cli_sites.py) turning a site's mailed sign-in codes off and on again: what
its own pages and its browsers' API calls are offered follows at once. The command's other
options are tested with what they register (tests/unit/domain/clients/, tests/unit/oidc/)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from tests.support.cli import run as cli

SITE_URI, SITE_ORIGIN = "https://shop.example/cb", "https://shop.example"


def _add(app: Flask, *options: str) -> None:
    added = cli(app, "sites", "add", "shop", "--redirect-uri", SITE_URI, "--origin", SITE_ORIGIN,
                *options)
    assert added.exit_code == 0, added.output


def _asked_from_the_site(client: FlaskClient) -> Any:
    return client.post("/api/v2/auth/email-code", json={"email": "ada@example.com"},
                       headers={"Origin": SITE_ORIGIN})


def test_a_site_added_without_email_codes_is_offered_none(app: Flask, client: FlaskClient):
    _add(app, "--no-email-code")
    assert client.get("/login/email-code?redirect_uri=" + SITE_URI).status_code == 403
    assert "/login/email-code" not in client.get("/login?redirect_uri=" + SITE_URI).text
    refused = _asked_from_the_site(client)
    assert refused.status_code == 403 and refused.get_json()["code"] == "email_code_off"
    assert "no email codes" in cli(app, "sites", "show", "shop").output
    assert client.get("/login/email-code").status_code == 200  # the service's own pages: on


def test_update_turns_them_on_and_off_and_leaves_them_unless_asked(app: Flask,
                                                                   client: FlaskClient):
    _add(app)
    assert _asked_from_the_site(client).status_code == 202
    assert cli(app, "sites", "update", "shop", "--no-email-code").exit_code == 0
    assert _asked_from_the_site(client).status_code == 403
    assert cli(app, "sites", "update", "shop", "--display-name", "Shop").exit_code == 0
    assert _asked_from_the_site(client).status_code == 403  # another change leaves it off
    assert cli(app, "sites", "update", "shop", "--email-code").exit_code == 0
    assert _asked_from_the_site(client).status_code == 202
    assert "no email codes" not in cli(app, "sites", "show", "shop").output
