"""The password sign-in of both API versions: authenticate, then a session and its first tokens
(the versions differ only in the body they read and the JSON they answer)."""

from __future__ import annotations

from app.domain import accounts, sessions
from app.domain.sessions import IssuedTokens
from app.web import captcha
from app.web.client import client_info


def sign_in_with_password(untrusted_email: str, password: str,
                          untrusted_captcha_token: str) -> IssuedTokens:
    client = client_info()
    with captcha.login_guard(untrusted_email, untrusted_captcha_token):
        user = accounts.authenticate(untrusted_email, password, client)
    return sessions.issue_tokens(user, "password", client)
