"""An OpenID Connect authorization request that waits while the person signs in, kept in a signed
cookie of its own, apart from the session cookie, which a sign-in replaces.
Why: docs/architecture/design-notes.md, "OpenID Connect authorization and pushed requests"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from flask import current_app, request, url_for
from itsdangerous import BadSignature, URLSafeTimedSerializer
from werkzeug.wrappers import Response

from app.infra.settings import settings

R = TypeVar("R", bound=Response)  # a redirect, or a Flask response: given back as it came

MAX_AGE = 600  # seconds a person may take to sign in
MAX_QUERY = 3000  # characters of an authorization request's query that a cookie can hold
_SALT = "svc-auth pending authorization"


@dataclass(frozen=True)
class Pending:
    query: str
    asked_at: int  # when the authorization request first came (the service's clock)


def _cookie_name() -> str:
    return ("__Host-svc_authorize" if current_app.config["SESSION_COOKIE_SECURE"]
            else "svc_authorize")


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings().secret_key, salt=_SALT)


def remember(response: R, query: str, asked_at: int) -> R:
    response.set_cookie(_cookie_name(), _serializer().dumps([query, asked_at]), max_age=MAX_AGE,
                        path="/", secure=current_app.config["SESSION_COOKIE_SECURE"],
                        httponly=True, samesite="Lax")
    return response


def forget(response: R) -> R:
    response.delete_cookie(_cookie_name(), path="/",
                           secure=current_app.config["SESSION_COOKIE_SECURE"], httponly=True,
                           samesite="Lax")
    return response


def pending() -> Pending | None:
    """This browser's waiting authorization request, if any (signed by us, not too old)."""
    untrusted_value = request.cookies.get(_cookie_name())
    if not untrusted_value:
        return None
    try:
        query, asked_at = _serializer().loads(untrusted_value, max_age=MAX_AGE)
    except (BadSignature, ValueError, TypeError):
        return None
    return Pending(str(query), int(asked_at))


def resume_url() -> str | None:
    """Where a finished sign-in goes when an authorization request waits for it."""
    waiting = pending()
    return f"{url_for('oidc.authorize')}?{waiting.query}" if waiting else None
