"""Where a captcha is never asked, even with the mode on and after failures: refresh, code
exchange, reset-password (tests/unit/domain/limits/test_captcha_login.py), confirmation links,
provider callbacks
and the OpenID Connect token endpoint (issue 17, item 2)."""

from __future__ import annotations

import pytest

from tests.support.captcha import answers_until_asked
from tests.support.captcha_standin import captcha_app_settings  # noqa: F401 (its settings)


@pytest.fixture
def captcha_extra():
    return {"GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret"}


def test_links_callbacks_and_the_token_endpoint_never_ask(client, standin, user):
    answers_until_asked(client, user.email)  # this address is now asked on sign-in
    calls = len(standin.calls)
    confirm = client.get("/confirm-email?token=unknown")
    assert confirm.status_code == 400 and "captcha" not in confirm.text.lower()
    callback = client.get("/api/v2/auth/github/callback?state=unknown&code=x")
    assert callback.status_code == 400 and callback.get_json()["code"] == "invalid_state"
    token = client.post("/oauth2/token", data={"grant_type": "authorization_code",
                                               "code": "unknown", "client_id": "symbols"})
    assert token.status_code in (400, 401) and "error" in token.get_json()
    assert "captcha" not in token.get_data(as_text=True)
    assert len(standin.calls) == calls
