"""Signing out of the hosted pages: the account's own button, and a client site's sign-out (the
kit's `signOut()`), which sends the browser through here so the next sign-in asks again."""

from __future__ import annotations

from flask import redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from app.domain.clients import sites
from app.domain.clients.errors import InvalidRedirectUri
from app.domain.sessions import browser_sessions
from app.pages.blueprint import bp
from app.web import browser, targets
from app.web.targets import Target


def _back_to(target: Target) -> str:
    """Where a site's sign-out returns: the redirect URI it named (registered, exactly), or,
    when it named itself by `callback`, its home."""
    if "redirect_uri" in request.args:
        return target.redirect_uri
    site = sites.site_of_redirect_uri(target.redirect_uri)
    return (site.home if site else None) or target.redirect_uri


@bp.get("/logout")
def sign_out_from_site() -> Response | str:
    """A site's sign-out (`callback` or `redirect_uri`, exactly as for sign-in, and `sid`: its
    ended session). Straight back when this browser is not signed in, or when the site's ended
    session was opened through this browser session; otherwise the person is asked first."""
    target = targets.from_request(required=False)
    if target is None:
        raise InvalidRedirectUri()
    signed_in = browser.current()
    if signed_in is not None:
        if not browser_sessions.site_signed_out_of(request.args.get("sid"),
                                                   signed_in.auth_session):
            named = {key: request.args[key] for key in ("callback", "redirect_uri")
                     if key in request.args}
            return render_template("pages/sign_out.html", carry=named,
                                   return_to=_back_to(target), email=signed_in.user.email)
        browser.sign_out()
    return redirect(_back_to(target))


@bp.post("/logout")
def logout() -> Response:
    """The sign-out button (CSRFProtect checked the form's token before we got here); back to
    the site that asked, if one did."""
    browser.sign_out()
    target = targets.from_request(required=False)
    return redirect(_back_to(target) if target else url_for(".login_form"))
