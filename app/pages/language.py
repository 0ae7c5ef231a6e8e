"""The language picker of every page (templates/base.html): a cookie for this browser, and the
signed-in account's saved language for its next browsers and its mails."""

from __future__ import annotations

import re

from flask import redirect, request
from werkzeug.wrappers import Response

from app.domain.accounts import accounts
from app.pages.blueprint import bp
from app.web import browser, locale

# A browser drops tabs and line breaks from a URL and reads a backslash as a slash, so
# "/\t/evil.example" is "//evil.example" there; a space or control character is no path of ours.
_NOT_IN_OUR_PATHS = re.compile(r"[\x00-\x20\x7f\\]")


def _same_site_path(untrusted_next: str | None) -> str:
    """Back to the page the picker was on: a path of ours only, never another origin."""
    if untrusted_next and untrusted_next.startswith("/") and not untrusted_next.startswith("//") \
            and not _NOT_IN_OUR_PATHS.search(untrusted_next):
        return untrusted_next
    return "/"


@bp.post("/language")
def choose_language() -> Response:
    code = locale.supported(request.form.get("language")) or locale.DEFAULT
    signed_in = browser.current()
    if signed_in is not None:
        accounts.set_language(signed_in.user.id, code)
    return locale.remember(redirect(_same_site_path(request.form.get("next")), 303), code)
