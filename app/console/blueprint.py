"""The console's blueprint and its gate: operators with a second factor only; to everyone else
every /admin path is a 404."""

from __future__ import annotations

from flask import Blueprint, Response, abort, g, make_response, render_template, request
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from app.domain.admin import operators
from app.domain.audit import ViewFamily, of_view
from app.domain.errors import AuthError
from app.extensions import csrf
from app.web import browser, trail
from app.web.client import client_info
from app.web.errors import Failure, register_failures

bp = Blueprint("console", __name__, url_prefix="/admin")
TITLES = {400: "This request could not be used", 403: "Not allowed",
          404: "There is nothing here", 429: "Slow down a little",
          500: "Something went wrong on our side", 503: "We are briefly unavailable"}
# The hosted pages' own 404 words: to a non-operator, /admin is no different from any
# address that leads nowhere.
NOTHING_HERE = "Check the address, or start again from the site you came from."


def _page(status: int, detail: str) -> tuple[str, int]:
    return render_template("errors/page.html", title=TITLES.get(status, TITLES[400]),
                           detail=detail, status=status, retry_after=None), status


def _failure(failure: Failure) -> tuple[str, int]:
    return _page(failure.status, "Try again in a moment.")


@bp.before_request
def _operators_only() -> ResponseReturnValue | None:
    signed_in = browser.current()
    if signed_in is None or not operators.is_operator(signed_in.user):
        abort(404)
    operators.require_second_factor(signed_in.user)
    if request.method == "POST":  # checked here, after the gate: before it, a 404 for all
        csrf.protect()
    g.operator = signed_in
    return None


@bp.after_request
def _trace_reads(response: Response) -> Response:
    """What an operator saw: each page shown, with the accounts on it (app/web/trail.py); a
    page whose trace the database did not take is a 503 instead."""
    signed_in = g.get("operator")
    if signed_in is None or request.method != "GET" or response.status_code >= 400 \
            or not request.endpoint:
        return response
    by = operators.acting(signed_in.user, client_info())
    if not trail.trace(of_view(ViewFamily.CONSOLE, request.endpoint.rsplit(".", 1)[-1]), by,
                       trail.accounts_read(), read=True):
        return make_response(_page(503, "Try again in a moment."))
    return response


@bp.errorhandler(AuthError)
def _refused(error: AuthError) -> tuple[str, int]:
    return _page(error.status, error.detail)


@bp.errorhandler(CSRFError)
def _csrf_failed(_error: CSRFError) -> tuple[str, int]:
    return _page(400, "This form expired or did not come from this site. Reload the page and "
                      "try again.")


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int]:
    status = error.code or 500
    return _page(status, NOTHING_HERE if status in (404, 405) else "Go back and try again.")


register_failures(bp, _failure)
