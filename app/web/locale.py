"""The language of a request's pages, chosen once a request (docs/accounts/languages.md): the OpenID
Connect authorization's `ui_locales`, then the language picked on a page (a cookie), then the
signed-in account's saved language, then the browser's Accept-Language; English otherwise."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from flask import current_app, g, has_request_context, request
from flask_babel import get_locale, get_translations
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup
from werkzeug.wrappers import Response

from app.web import accept_language, browser, pending_authorization

# Adding a language: its catalogue (app/translations/<code>/LC_MESSAGES/messages.po), then its
# code and its name in itself here.
SUPPORTED: tuple[tuple[str, str], ...] = (
    ("en", "English"), ("fr", "Français"), ("de", "Deutsch"), ("es", "Español"))
CODES = tuple(code for code, _ in SUPPORTED)
DEFAULT = "en"
COOKIE_DAYS = 400  # the longest a browser keeps a cookie (RFC 6265bis)


def cookie_name() -> str:
    return "__Host-svc_lang" if current_app.config["SESSION_COOKIE_SECURE"] else "svc_lang"


def supported(untrusted_tag: str | None) -> str | None:
    """The language of ours that a language tag (`fr`, `fr-CA`, `de_AT`) names, if any."""
    if not untrusted_tag:
        return None
    primary = untrusted_tag.strip().replace("_", "-").split("-")[0].lower()
    return primary if primary in CODES else None


def select() -> str | None:
    """Flask-Babel's locale selector: None outside a request (a mail's worker thread), which
    means the default, or whatever `force_locale` set."""
    if not has_request_context():
        return None
    if "svc_locale" not in g:
        g.svc_locale = (_asked_by_site() or supported(request.cookies.get(cookie_name()))
                        or _saved() or from_browser() or DEFAULT)
    chosen: str = g.svc_locale
    return chosen


def from_browser() -> str | None:
    """The language of ours the request's Accept-Language asks for (RFC 4647 lookup), if any."""
    return accept_language.lookup(request.headers.get("Accept-Language"), CODES)


def _asked_by_site() -> str | None:
    """The first of the authorization request's `ui_locales` we have (OpenID Connect Core
    §3.1.2.1), on /oauth2/authorize and on the pages of the authorization that waits."""
    untrusted_value = request.args.get("ui_locales") if request.path.startswith("/oauth2/") \
        else None
    if untrusted_value is None:
        waiting = pending_authorization.pending()
        if waiting is not None:
            untrusted_value = next(iter(parse_qs(waiting.query).get("ui_locales", [])), None)
    return next((code for code in map(supported, (untrusted_value or "").split()) if code), None)


def _saved() -> str | None:
    signed_in = browser.current()
    return supported(signed_in.user.language) if signed_in is not None else None


def remember(response: Response, code: str) -> Response:
    response.set_cookie(cookie_name(), code, max_age=COOKIE_DAYS * 86400, path="/",
                        secure=current_app.config["SESSION_COOKIE_SECURE"], httponly=True,
                        samesite="Lax")
    return response


def template_context() -> dict[str, Any]:
    """`language` for <html lang> and the picker (a mail's too, under its `force_locale`),
    `languages` for the picker's choices; and the template's gettext and ngettext bound to the
    catalogue of the render's language, looked up once a render rather than for every string
    (Flask-Babel's callables look up the request, the locale and the domain each time)."""
    current = get_locale()
    gettext, ngettext = _bound(get_translations())
    return {"language": current.language if current is not None else DEFAULT,
            "languages": SUPPORTED, "gettext": gettext, "_": gettext, "ngettext": ngettext}


def _bound(catalogue: Any) -> tuple[Any, Any]:
    """Jinja's "new style" gettext and ngettext (jinja2.ext's i18n, as Flask-Babel installs it)
    over one catalogue: the result escaped under autoescape, then always formatted with the
    named variables (and ngettext's `num`)."""

    @pass_context
    def gettext(context: Context, string: str, **variables: Any) -> Any:
        found = catalogue.ugettext(string)
        if context.eval_ctx.autoescape:
            found = Markup(found)  # noqa: S704 (our catalogue's words, as Jinja's own i18n)
        # (Formatting with no variables changes only "%%": most strings skip it.)
        return found % variables if variables or "%" in found else found

    @pass_context
    def ngettext(context: Context, singular: str, plural: str, num: int,
                 **variables: Any) -> Any:
        variables.setdefault("num", num)
        found = catalogue.ungettext(singular, plural, num)
        if context.eval_ctx.autoescape:
            found = Markup(found)  # noqa: S704 (our catalogue's words, as Jinja's own i18n)
        return found % variables

    return gettext, ngettext
