"""Signing in with a mailed code on the hosted pages: the address, then the code; or the mailed
link, which signs in only in the browser that asked (a value in its session cookie, bound to the
code: accounts/email_codes.py). Elsewhere the link's page shows the code to type there; opening
it changes nothing (mail scanners follow links): the sign-in is the page's button.
A sign-in here goes on as a password's does (web/browser.py): to the second step, the client
site, or the waiting OpenID Connect authorization."""

from __future__ import annotations

import secrets
from dataclasses import asdict
from typing import Any
from urllib.parse import parse_qs

from flask import redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from app.domain.accounts import email_codes, email_sign_in, providers
from app.domain.accounts.email_code_errors import EmailCodeOff, InvalidEmailCode
from app.domain.clients import sites
from app.domain.clients.sites import Site
from app.domain.errors import RateLimited
from app.domain.sessions.errors import EmailNotConfirmed
from app.pages.blueprint import bp, duration, mail_captcha_refusal, refusal, too_many
from app.pages.forms import EmailCodeEntryForm, EmailCodeForm, MailedLinkForm, required_text
from app.web import browser, captcha, pending_authorization, ratelimits, targets
from app.web.client import client_info
from app.web.targets import Target

Page = str | tuple[str, int] | tuple[str, int, dict[str, str]] | Response
ASKED_KEY = "svc_email_code"  # this browser's request: its binding value, address and target


def site_for_page(target: Target | None) -> Site | None:
    """The site this sign-in is for: the target's, or the waiting authorization's client."""
    if target is not None:
        return sites.site_of_redirect_uri(target.redirect_uri)
    waiting = pending_authorization.pending()
    if waiting is None:
        return None
    client_id = parse_qs(waiting.query).get("client_id", [""])[0]
    return sites.registered_site(client_id)


def offered(target: Target | None) -> bool:
    """Whether the login page offers it (for the target's site, if any)."""
    return email_sign_in.enabled(site_for_page(target))


def _page(template: str, target: Target | None, status: int = 200,
          widget: captcha.Widget | None = None, **context: Any) -> Page:
    body = render_template(template, carry=target.query() if target else {},
                           providers=providers.enabled_providers(), captcha=widget, **context)
    return body, status, captcha.page_headers(widget)


@bp.get("/login/email-code")
def email_code_form() -> Page:
    target = targets.from_request(required=False)
    email_sign_in.check_enabled(site_for_page(target))
    untrusted_hint = request.args.get("email", "")[:254]
    return _page("pages/email_code.html", target, widget=captcha.widget(),
                 form=EmailCodeForm(data={"email": untrusted_hint}))


@bp.post("/login/email-code")
@ratelimits.email_code
def email_code_submit() -> Page:
    target = targets.from_request(required=False)
    site = site_for_page(target)
    email_sign_in.check_enabled(site)
    form, widget = EmailCodeForm(), captcha.widget()
    if not form.validate_on_submit():
        return _page("pages/email_code.html", target, 422, widget, form=form)
    refused = mail_captcha_refusal(captcha.EMAIL_CODE, form, lambda status: _page(
        "pages/email_code.html", target, status, widget, form=form))
    if refused is not None:
        return refused
    value = secrets.token_urlsafe(32)
    email = required_text(form.email)
    email_sign_in.request_code(email, client_info(), browser=value, site=site)
    session[ASKED_KEY] = {"browser": value, "email": email,
                          "target": asdict(target) if target else None}
    return redirect(url_for(".email_code_entry", **(target.query() if target else {})))


def _asked() -> dict[str, Any] | None:
    asked = session.get(ASKED_KEY)
    return asked if isinstance(asked, dict) and isinstance(asked.get("email"), str) else None


def _entry_page(target: Target | None, form: EmailCodeEntryForm, email: str,
                status: int = 200) -> Page:
    return _page("pages/email_code_entry.html", target, status, form=form, email=email,
                 lasts=duration(int(email_codes.TTL.total_seconds())))


@bp.get("/login/email-code/verify")
def email_code_entry() -> Page:
    target = targets.from_request(required=False)
    asked = _asked()
    if asked is None:
        return redirect(url_for(".email_code_form", **(target.query() if target else {})))
    return _entry_page(target, EmailCodeEntryForm(), asked["email"])


@bp.post("/login/email-code/verify")
@ratelimits.email_code_verify
def email_code_verify() -> Page:
    target = targets.from_request(required=False)
    email_sign_in.check_enabled(site_for_page(target))
    asked, form = _asked(), EmailCodeEntryForm()
    if asked is None:
        return redirect(url_for(".email_code_form", **(target.query() if target else {})))
    if not form.validate_on_submit():
        return _entry_page(target, form, asked["email"], 422)
    try:
        user = email_sign_in.authenticate(asked["email"], required_text(form.code), client_info())
        return browser.answer(browser.here(target).finish(user, email_sign_in.PROVIDER), target)
    except (InvalidEmailCode, EmailNotConfirmed) as error:
        form.form_errors.append(_(error.detail))
        return _entry_page(target, form, asked["email"], error.status)
    except RateLimited as error:
        form.form_errors.append(too_many(_("Too many tries."), error.retry_after))
        return refusal(error, _entry_page(target, form, asked["email"], error.status))


def _binding() -> str | None:
    asked = _asked()
    value = asked.get("browser") if asked else None
    return value if isinstance(value, str) else None


@bp.get("/login/email-code/link")
def email_code_link() -> Page:
    """The mailed link: changes nothing. In the browser that asked, a button that signs in;
    in any other, the code to type in the browser that asked."""
    form = MailedLinkForm(token=request.args.get("token", ""))
    looked = email_sign_in.look(form.token.data or "", _binding())
    if looked is None:
        error = InvalidEmailCode()
        return _page("pages/email_code_link.html", None, error.status, error=error)
    return _page("pages/email_code_link.html", None, form=form,
                 code=None if looked.same_browser else looked.code)


@bp.post("/login/email-code/link")
@ratelimits.email_code_verify
def email_code_link_submit() -> Page:
    form, asked = MailedLinkForm(), _asked()
    target = targets.Target(**asked["target"]) if asked and asked.get("target") else None
    try:
        email_sign_in.check_enabled(site_for_page(target))
        if not form.validate_on_submit():
            raise InvalidEmailCode()
        user = email_sign_in.authenticate_link(form.token.data or "", _binding(), client_info())
        return browser.answer(browser.here(target).finish(user, email_sign_in.PROVIDER), target)
    except (InvalidEmailCode, EmailNotConfirmed, EmailCodeOff) as error:
        return _page("pages/email_code_link.html", None, error.status, error=error)
