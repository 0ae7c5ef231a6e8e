"""The password sign-in of both API versions: authenticate, then a session and its first tokens
(the versions differ only in the body they read and the JSON they answer). A captcha is asked
first once the email or the address has failed recently (web/captcha.py). For an account with a
second factor: v2 gets a pending sign-in to complete (factors/second_factors.py), v1, which has
no second step, a problem that sends the person to the hosted login."""

from __future__ import annotations

from flask import request

from app.domain.accounts import accounts, email_sign_in
from app.domain.clients import sites
from app.domain.clients.sites import Site
from app.domain.factors import second_factors
from app.domain.factors.errors import MfaRequired
from app.domain.factors.pending import SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.sessions import sessions
from app.domain.sessions.sessions import IssuedTokens
from app.domain.sign_in import ApiSignIn
from app.infra.settings import settings
from app.models import User
from app.web import captcha
from app.web.client import client_info


def _authenticate(untrusted_email: str, password: str, untrusted_captcha_token: str) -> User:
    with captcha.login_guard(untrusted_email, untrusted_captcha_token):
        return accounts.authenticate(untrusted_email, password, client_info())


def sign_in_with_password(untrusted_email: str, password: str, untrusted_captcha_token: str
                          ) -> IssuedTokens | SecondFactorRequired:
    user = _authenticate(untrusted_email, password, untrusted_captcha_token)
    return _finish(user, "password")


def sign_in_with_email_code(untrusted_email: str, untrusted_code: str
                            ) -> IssuedTokens | SecondFactorRequired:
    """The mailed code's way in (accounts/email_sign_in.py), finished as the password's."""
    email_sign_in.check_enabled(site_of_caller())
    user = email_sign_in.authenticate(untrusted_email, untrusted_code, client_info())
    return _finish(user, email_sign_in.PROVIDER)


def site_of_caller() -> Site | None:
    """The site whose page calls, by the `Origin` a browser sends (None for a server's call)."""
    return sites.site_of_origin(request.headers.get("Origin"))


def _finish(user: User, provider: str) -> IssuedTokens | SecondFactorRequired:
    if second_factors.has_second_factor(user) and \
            not second_factors.methods(user, Purpose.API):
        # Only passkeys, which answer on the hosted pages' origin alone: the person signs in there.
        raise MfaRequired(f"{settings().public_url}/login")
    return ApiSignIn(client=client_info()).finish(user, provider)


def sign_in_without_second_step(untrusted_email: str, password: str,
                                untrusted_captcha_token: str) -> IssuedTokens:
    user = _authenticate(untrusted_email, password, untrusted_captcha_token)
    if second_factors.has_second_factor(user):
        raise MfaRequired(f"{settings().public_url}/login")
    return sessions.issue_tokens(user, "password", client_info())
