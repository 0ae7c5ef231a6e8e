"""The messages the service sends, rendered from templates/email/ (text and HTML)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask import current_app, render_template

from app.domain.accounts.providers import DISPLAY_NAMES
from app.domain.clients import sites
from app.domain.device_names import describe
from app.infra.mail import Message


def _message(to: str, subject: str, template: str, **context: Any) -> Message:
    # Every mail names the account exactly as stored (domain/addresses.py), so a look-alike
    # address shows for what it is.
    public_url = current_app.config["PUBLIC_URL"]
    context = {"brand": current_app.config["BRAND"], "account": to,
               "forgot_link": f"{public_url}/forgot-password",
               "account_link": f"{public_url}/account", **context}
    return Message(to=to, subject=subject,
                   text=render_template(f"email/{template}.txt", **context),
                   html=render_template(f"email/{template}.html", **context))


def _link(path: str, token: str, **params: str) -> str:
    # Always the configured address, never the request's Host header (which an attacker sets).
    query = urlencode({"token": token, **params})
    return f"{current_app.config['PUBLIC_URL']}{path}?{query}"


def reset_password(to: str, token: str, minutes: int, site: str | None = None) -> Message:
    """`site`: the registered name of the client site the request came from, if any: the mail
    names it, and its link leads back there."""
    found = sites.registered_site(site) if site else None
    return _message(to, "Reset your password", "reset_password",
                    link=_link("/reset-password", token,
                               **({"site": found.name} if found else {})),
                    minutes=minutes, site_name=found.display_name if found else None)


def password_changed(to: str, unlinked: list[str] | None = None) -> Message:
    """After a change or a reset; `unlinked` names the providers a reset removed."""
    return _message(to, "Your password was changed", "password_changed",
                    unlinked=_names(unlinked or []), unlinked_count=len(unlinked or []))


def provider_linked(to: str, provider: str, *, took_over: bool = False) -> Message:
    """A provider can now sign in to the account (`took_over`: and its password was removed)."""
    return _message(to, f"{_names([provider])} was linked to your account", "provider_linked",
                    provider=_names([provider]), took_over=took_over)


def provider_unlinked(to: str, provider: str) -> Message:
    return _message(to, f"{_names([provider])} was unlinked from your account",
                    "provider_unlinked", provider=_names([provider]))


def second_factor_changed(to: str, factor: str, *, added: bool) -> Message:
    """A second factor (`factor`, in words) was added to the account or removed from it."""
    verb = "added to" if added else "removed from"
    return _message(to, f"A second factor was {verb} your account", "second_factor_changed",
                    factor=factor, added=added)


def _names(providers: list[str]) -> str:
    return " and ".join(DISPLAY_NAMES.get(p, p) for p in providers)


def confirm_email(to: str, token: str) -> Message:
    return _message(to, "Confirm your email address", "confirm_email",
                    link=_link("/confirm-email", token))


def invitation(to: str, token: str, days: int) -> Message:
    """An account an operator opened: the link sets its first password (a reset link)."""
    return _message(to, f"Your {current_app.config['BRAND']} account", "invitation",
                    link=_link("/reset-password", token), days=days)


def email_change(to: str, token: str, current: str) -> Message:
    """To the new address: the link that makes the change."""
    return _message(to, "Confirm your new email address", "email_change",
                    link=_link("/email-change", token), current=current)


def email_change_refused(to: str) -> Message:
    """To a new address that has an account already: nothing changed."""
    return _message(to, "An address change was refused", "email_change_refused")


def email_changed(to: str, new: str, token: str) -> Message:
    """To the old address: the change, and the link that undoes it."""
    return _message(to, "Your email address was changed", "email_changed", new=new,
                    link=_link("/email-change/undo", token))


def deletion_scheduled(to: str, token: str, days: int) -> Message:
    return _message(to, "Your account will be deleted", "deletion_scheduled", days=days,
                    link=_link("/account/restore", token))


def new_device(to: str, user_agent: str | None, at: str) -> Message:
    """A sign-in from a device the account has not used: which, and when."""
    return _message(to, "A new sign-in to your account", "new_device",
                    device=describe(user_agent), at=datetime.fromisoformat(at))


def recovery_code_used(to: str, left: int) -> Message:
    return _message(to, "A recovery code was used", "recovery_code_used", left=left)
