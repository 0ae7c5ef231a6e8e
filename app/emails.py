"""The messages the service sends, rendered from templates/email/ (text and HTML)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from flask import current_app, render_template

from app.domain.mail import Message


def _message(to: str, subject: str, template: str, **context: Any) -> Message:
    context = {"brand": current_app.config["BRAND"], **context}
    return Message(to=to, subject=subject,
                   text=render_template(f"email/{template}.txt", **context),
                   html=render_template(f"email/{template}.html", **context))


def _link(path: str, token: str, **params: str) -> str:
    # Always the configured address, never the request's Host header (which an attacker sets).
    query = urlencode({"token": token, **params})
    return f"{current_app.config['PUBLIC_URL']}{path}?{query}"


def reset_password(to: str, token: str, minutes: int, site: str | None = None) -> Message:
    """`site`: the registered name of the client site the request came from, if any."""
    return _message(to, "Reset your password", "reset_password",
                    link=_link("/reset-password", token, **({"site": site} if site else {})),
                    minutes=minutes)


def password_changed(to: str) -> Message:
    return _message(to, "Your password was changed", "password_changed",
                    forgot_link=f"{current_app.config['PUBLIC_URL']}/forgot-password")


def confirm_email(to: str, token: str) -> Message:
    return _message(to, "Confirm your email address", "confirm_email",
                    link=_link("/confirm-email", token))
