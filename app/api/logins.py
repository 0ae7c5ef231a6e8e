"""The password sign-in of both API versions: authenticate, then a session and its first tokens
(the versions differ only in the body they read and the JSON they answer). A captcha is asked
first once the email or the address has failed recently (web/captcha.py). For an account with a
second factor: v2 gets a pending sign-in to complete (factors/second_factors.py), v1, which has
no second step, a problem that sends the person to the hosted login."""

from __future__ import annotations

from flask import current_app

from app.domain.accounts import accounts
from app.domain.factors import second_factors
from app.domain.factors.errors import MfaRequired
from app.domain.factors.pending import SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.sessions import sessions
from app.domain.sessions.sessions import IssuedTokens
from app.domain.sign_in import ApiSignIn
from app.models import User
from app.web import captcha
from app.web.client import client_info


def _authenticate(untrusted_email: str, password: str, untrusted_captcha_token: str) -> User:
    with captcha.login_guard(untrusted_email, untrusted_captcha_token):
        return accounts.authenticate(untrusted_email, password, client_info())


def sign_in_with_password(untrusted_email: str, password: str, untrusted_captcha_token: str
                          ) -> IssuedTokens | SecondFactorRequired:
    user = _authenticate(untrusted_email, password, untrusted_captcha_token)
    if second_factors.has_second_factor(user) and \
            not second_factors.methods(user, Purpose.API):
        # Only passkeys, which answer on the hosted pages' origin alone: the person signs in there.
        raise MfaRequired(f"{current_app.config['PUBLIC_URL']}/login")
    return ApiSignIn(client=client_info()).finish(user, "password")


def sign_in_without_second_step(untrusted_email: str, password: str,
                                untrusted_captcha_token: str) -> IssuedTokens:
    user = _authenticate(untrusted_email, password, untrusted_captcha_token)
    if second_factors.has_second_factor(user):
        raise MfaRequired(f"{current_app.config['PUBLIC_URL']}/login")
    return sessions.issue_tokens(user, "password", client_info())
