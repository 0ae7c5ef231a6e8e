"""The messages the service sends, rendered from templates/email/ (text and HTML) in the
language the account chose (users.language; English when it chose none). Mails are rendered by
the outbox's worker, outside any request: the language is the account's, never a browser's."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from babel.lists import format_list
from flask import render_template
from flask_babel import force_locale, get_locale
from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString
from sqlalchemy import select

from app.domain.accounts.providers import DISPLAY_NAMES
from app.domain.clients import sites
from app.domain.device_names import describe
from app.extensions import db
from app.infra.mail import Message
from app.infra.settings import settings
from app.models import User

DEFAULT_LANGUAGE = "en"


def _language_of(address: str) -> str:
    """The saved language of the account at `address` (as stored), or the default."""
    found = db.session.scalar(select(User.language).where(User.email == address))
    return found or DEFAULT_LANGUAGE


def _message(to: str, subject: LazyString, template: str, *, language: str | None = None,
             **context: Any) -> Message:
    # Every mail names the account exactly as stored (domain/addresses.py), so a look-alike
    # address shows for what it is.
    public_url = settings().public_url
    context = {"brand": settings().brand, "account": to,
               "forgot_link": f"{public_url}/forgot-password",
               "account_link": f"{public_url}/account", **context}
    with force_locale(language or _language_of(to)):
        return Message(to=to, subject=str(subject),
                       text=render_template(f"email/{template}.txt", **context),
                       html=render_template(f"email/{template}.html", **context))


def _link(path: str, token: str, **params: str) -> str:
    # Always the configured address, never the request's Host header (which an attacker sets).
    query = urlencode({"token": token, **params})
    return f"{settings().public_url}{path}?{query}"


def reset_password(to: str, token: str, minutes: int, site: str | None = None) -> Message:
    """`site`: the registered name of the client site the request came from, if any: the mail
    names it, and its link leads back there."""
    found = sites.registered_site(site) if site else None
    return _message(to, _l("Reset your password"), "reset_password",
                    link=_link("/reset-password", token,
                               **({"site": found.name} if found else {})),
                    minutes=minutes, site_name=found.display_name if found else None)


def password_changed(to: str, unlinked: list[str] | None = None) -> Message:
    """After a change or a reset; `unlinked` names the providers a reset removed."""
    return _message(to, _l("Your password was changed"), "password_changed",
                    unlinked=_names(unlinked or []), unlinked_count=len(unlinked or []))


def password_removed(to: str) -> Message:
    """After a sign-in that proved the address removed a password set before anyone had."""
    return _message(to, _l("The password of your account was removed"), "password_removed")


def provider_linked(to: str, provider: str, *, took_over: bool = False) -> Message:
    """A provider can now sign in to the account (`took_over`: and its password was removed)."""
    return _message(to, _l("%(provider)s was linked to your account", provider=_names([provider])),
                    "provider_linked", provider=_names([provider]), took_over=took_over)


def provider_unlinked(to: str, provider: str) -> Message:
    return _message(to, _l("%(provider)s was unlinked from your account",
                           provider=_names([provider])),
                    "provider_unlinked", provider=_names([provider]))


def second_factor_changed(to: str, factor: str, *, added: bool,
                          name: str | None = None) -> Message:
    """A second factor was added to the account or removed from it: `factor` is "authenticator
    app", "passkey" (named `name`) or "every second factor"."""
    subject = (_l("A second factor was added to your account") if added
               else _l("A second factor was removed from your account"))
    return _message(to, subject, "second_factor_changed", factor=factor, name=name, added=added)


def _names(providers: list[str]) -> LazyString:
    """The providers' names as a list in the mail's language ("Google and GitHub")."""
    names = [DISPLAY_NAMES.get(p, p) for p in providers]
    return LazyString(lambda: format_list(names, locale=get_locale() or DEFAULT_LANGUAGE)
                      if names else "")


def confirm_email(to: str, token: str) -> Message:
    return _message(to, _l("Confirm your email address"), "confirm_email",
                    link=_link("/confirm-email", token))


def email_code(to: str, code: str, token: str, minutes: int) -> Message:
    """A sign-in code, and a link that signs in in the browser that asked for it."""
    return _message(to, _l("Your sign-in code: %(code)s", code=code), "email_code", code=code,
                    link=_link("/login/email-code/link", token), minutes=minutes)


def invitation(to: str, token: str, days: int) -> Message:
    """An account an operator opened: the link sets its first password (a reset link)."""
    return _message(to, _l("Your %(brand)s account", brand=settings().brand),
                    "invitation", link=_link("/reset-password", token), days=days)


def email_change(to: str, token: str, current: str) -> Message:
    """To the new address, in the language of the account that moves there: the link that
    makes the change."""
    return _message(to, _l("Confirm your new email address"), "email_change",
                    language=_language_of(current), link=_link("/email-change", token),
                    current=current)


def email_change_refused(to: str) -> Message:
    """To a new address that has an account already: nothing changed."""
    return _message(to, _l("An address change was refused"), "email_change_refused")


def signup_code(to: str, code: str, minutes: int, language: str | None = None) -> Message:
    """To an address with no account yet: the code of a passkey sign-up, in the language of
    the page that asked (no account has one to read)."""
    return _message(to, _l("Your code to create an account"), "signup_code",
                    language=language, code=code, minutes=minutes)


def email_changed(to: str, new: str, token: str) -> Message:
    """To the old address: the change, and the link that undoes it. The account is now at
    `new`: its language is found there."""
    return _message(to, _l("Your email address was changed"), "email_changed",
                    language=_language_of(new), new=new, link=_link("/email-change/undo", token))


def deletion_scheduled(to: str, token: str, days: int) -> Message:
    return _message(to, _l("Your account will be deleted"), "deletion_scheduled", days=days,
                    link=_link("/account/restore", token))


def new_device(to: str, user_agent: str | None, at: str) -> Message:
    """A sign-in from a device the account has not used: which, and when."""
    return _message(to, _l("A new sign-in to your account"), "new_device",
                    device=describe(user_agent), at=datetime.fromisoformat(at))


def recovery_code_used(to: str, left: int) -> Message:
    return _message(to, _l("A recovery code was used"), "recovery_code_used", left=left)
