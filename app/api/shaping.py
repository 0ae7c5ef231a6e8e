"""Shaping the domain's results as JSON, the same way for every version."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app

from app.domain.sessions.sessions import IssuedTokens
from app.infra.live_sessions import Account
from app.models import User


def user_json(user: User) -> dict[str, Any]:
    return {"id": user.id, "email": user.email, "full_name": user.full_name, "plan": user.plan,
            "email_verified": user.email_verified}


def account_json(account: Account) -> dict[str, Any]:
    """The user as a bearer call sees it, with the providers linked to the account."""
    return {"id": account.id, "email": account.email, "full_name": account.full_name,
            "plan": account.plan, "email_verified": account.email_verified,
            "providers": list(account.providers)}


def token_fields(issued: IssuedTokens) -> dict[str, Any]:
    return {"access_token": issued.access_token, "refresh_token": issued.refresh_token,
            "token_type": "bearer", "expires_in": issued.expires_in}


def login_json(issued: IssuedTokens) -> dict[str, Any]:
    return {**token_fields(issued), "user": user_json(issued.user)}


CONFIRMATION_PENDING = "Confirm your email address: we sent you a link. Then sign in."


def confirmation_pending_json(user: User) -> dict[str, Any]:
    """A sign-up that must confirm its address before any session exists: no tokens."""
    return {"user": user_json(user), "confirmation_required": True,
            "detail": CONFIRMATION_PENDING}


NO_STORE = (("Cache-Control", "no-store"), ("Pragma", "no-cache"))


def no_store(body: dict[str, Any], status: int = 200) -> Response:
    """A response that carries tokens: never cached by anyone (RFC 6749 §5.1)."""
    return current_app.response_class(current_app.json.dumps(body) + "\n", status,
                                      headers=NO_STORE, mimetype="application/json")
