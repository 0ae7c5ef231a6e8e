"""The hosted pages' blueprint, and their errors: HTML pages, never JSON."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from flask import Blueprint, Response, make_response, render_template
from flask.typing import ResponseReturnValue
from flask_babel import gettext, ngettext
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from app.domain.accounts.errors import InvalidResetToken
from app.domain.accounts.providers import DISPLAY_NAMES
from app.domain.device_names import describe
from app.domain.errors import AuthError, RateLimited
from app.domain.limits.captcha_errors import CaptchaProblem, CaptchaUnavailable
from app.domain.text import Words
from app.web import captcha
from app.web.errors import Failure, register_failures

T = TypeVar("T")
bp = Blueprint("pages", __name__)
bp.add_app_template_filter(describe, "device")


def words(text: object) -> str:
    """Words for a person, in the page's language: the domain's (Words, with their values), a
    message of the catalogue, or any other text as it is (already said in the language)."""
    if isinstance(text, Words):
        return str(gettext(text.message, **text.values))
    return str(gettext(text)) if isinstance(text, str) and text else str(text or "")


bp.add_app_template_filter(words, "words")
bp.add_app_template_global(  # a template global may be any value
    DISPLAY_NAMES, "provider_names")  # type: ignore[arg-type]  # typed for functions only

ERROR_TEXT = {
    400: (_l("This request could not be used"), _l("Go back and try again.")),
    404: (_l("There is nothing here"), _l("Check the address, or start again from the site you "
                                          "came from.")),
    405: (_l("There is nothing here"), _l("Check the address.")),
    429: (_l("Slow down a little"), _l("Wait a little, then try again.")),
    500: (_l("Something went wrong on our side"), _l("Try again in a moment.")),
    503: (_l("We are briefly unavailable"), _l("Try again in a moment.")),
}


def error_page(status: int, detail: str | None = None, *,
               retry_after: int | None = None) -> tuple[str, int, dict[str, str]]:
    title, advice = ERROR_TEXT.get(status, ERROR_TEXT[400])
    return (render_template("errors/page.html", title=title, detail=words(detail or advice),
                            status=status, retry_after=retry_after), status,
            _retry_after(retry_after))


def refusal(error: AuthError, page: ResponseReturnValue | None = None) -> Response:
    """How a page says no to `error`: `page` (a form again, with the error's words on it), or else
    the error page with its detail; with the error's status, and its Retry-After if it has one."""
    if page is None:
        page = error_page(error.status, error.detail, retry_after=error.retry_after)
    response = make_response(page)
    response.status_code = error.status
    response.headers.update(_retry_after(error.retry_after))
    return response


def mail_captcha_refusal(purpose: str, form: FlaskForm,
                         page: Callable[[int], T]) -> T | Response | None:
    """The captcha of a page that mails (always asked when captcha is on): None when it passed;
    else the error page (the provider does not answer), or `page(status)` with the form's error."""
    try:
        captcha.check(purpose, captcha.form_token())
    except CaptchaUnavailable as error:
        return refusal(error)
    except CaptchaProblem as problem:
        form.form_errors.append(captcha.PAGE_WORDS[problem.code])
        return page(problem.status)
    return None


def too_many(what: str, retry_after: int, *, or_reset: bool = False) -> str:
    """A limit's words on a form: "Too many wrong codes. Try again in 5 minutes."; `what` is its
    first sentence, said already ("Too many wrong codes.")."""
    if or_reset:
        return f"{what} " + str(gettext("Try again in %(wait)s, or reset your password.",
                                        wait=duration(retry_after)))
    return f"{what} " + str(gettext("Try again in %(wait)s.", wait=duration(retry_after)))


def _retry_after(seconds: int | None) -> dict[str, str]:
    return {"Retry-After": str(seconds)} if seconds else {}


@bp.errorhandler(AuthError)
def _auth_error(error: AuthError) -> tuple[str, int]:
    if isinstance(error, InvalidResetToken):
        return render_template("errors/reset_link.html", error=error), error.status
    return render_template("errors/auth_error.html", error=error), error.status


@bp.errorhandler(RateLimited)
def _throttled(error: RateLimited) -> tuple[str, int, dict[str, str]]:
    return _render_failure(Failure(429, error.code, error.retry_after))


@bp.errorhandler(CSRFError)
def _csrf_failed(_error: CSRFError) -> tuple[str, int, dict[str, str]]:
    return error_page(400, gettext("This form expired or did not come from this site. Reload the "
                                   "page and try again."))


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int, dict[str, str]]:
    return error_page(error.code or 500)


def _render_failure(failure: Failure) -> tuple[str, int, dict[str, str]]:
    if failure.status == 429 and failure.retry_after is not None:
        return error_page(429, too_many(gettext("Too many attempts."), failure.retry_after),
                          retry_after=failure.retry_after)
    return error_page(failure.status, retry_after=failure.retry_after)


register_failures(bp, _render_failure)


def duration(seconds: int) -> str:
    """A wait as a person reads it: seconds, minutes, or (a day's limit) hours."""
    if seconds < 90:
        return str(ngettext("%(num)d second", "%(num)d seconds", seconds))
    if seconds < 90 * 60:
        return str(ngettext("%(num)d minute", "%(num)d minutes", math.ceil(seconds / 60)))
    return str(ngettext("%(num)d hour", "%(num)d hours", math.ceil(seconds / 3600)))
