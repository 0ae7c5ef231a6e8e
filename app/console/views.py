"""The console's pages: search accounts, one account, and each change behind a confirmation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import abort, flash, g, redirect, render_template, request, url_for
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response
from wtforms import StringField
from wtforms.validators import Length, Optional, Regexp

from app.console.blueprint import bp
from app.domain import text
from app.domain.admin import actions, activity, directory, operators
from app.domain.admin.directory import Status
from app.domain.admin.pages import Page
from app.domain.audit import ClientInfo
from app.domain.errors import InvalidBody
from app.domain.factors.errors import InvalidSecondFactor, StepUpRequired
from app.domain.sessions import sessions
from app.models import User
from app.web import trail
from app.web.browser import BrowserUser
from app.web.client import client_info

PRINTABLE = Regexp(text.PRINTABLE_TEXT, message="Remove the control and formatting characters.")
RECENT_EVENTS = 20


class ConfirmForm(FlaskForm):
    """A change, confirmed: a fresh code unless the operator signed in a few minutes ago."""

    code = StringField("Code from your authenticator app, or a recovery code",
                       validators=[Length(max=32), PRINTABLE],
                       render_kw={"autocomplete": "one-time-code", "autocapitalize": "none"})
    plan = StringField("Plan", validators=[Optional(), Length(max=32), PRINTABLE])
    full_name = StringField("Name", validators=[Optional(), Length(max=200), PRINTABLE])


@dataclass(frozen=True)
class Change:
    title: str  # "Disable this account"
    consequence: str  # what confirming does
    run: Callable[[User, ClientInfo, ConfirmForm], object]
    asks: tuple[str, ...] = ()  # the form's fields it needs besides the code


CHANGES = {
    "disable": Change("Disable this account", "It can no longer sign in, and every session "
                      "ends at once.", lambda user, by, _form: actions.disable(user, by)),
    "enable": Change("Enable this account", "It can sign in again.",
                     lambda user, by, _form: actions.enable(user, by)),
    "end-sessions": Change("End every session", "Every device signed in to it is signed out.",
                           lambda user, by, _form: actions.end_sessions(user, by)),
    "clear-factors": Change("Remove every second factor", "Its authenticator app, passkeys "
                            "and recovery codes go; the owner is told by mail.",
                            lambda user, by, _form: actions.clear_second_factors(user, by)),
    "password-reset": Change("Send a password-reset link", "A link to choose a new password "
                             "goes to its address.",
                             lambda user, by, _form: actions.send_password_reset(user, by)),
    "edit": Change("Change the name or plan", "Sites see the new plan from their next check.",
                   lambda user, by, form: actions.update(
                       user, by, full_name=form.full_name.data, plan=form.plan.data or None),
                   asks=("full_name", "plan")),
}


def _operator() -> BrowserUser:
    found: BrowserUser = g.operator  # the console's gate (app/console/__init__.py) set it
    return found


@bp.get("/", strict_slashes=False)
def search() -> str | tuple[str, int]:
    untrusted = request.args
    status = untrusted.get("status") if untrusted.get("status") in set(Status) else None
    try:
        found = directory.search_users(
            directory.Search(untrusted.get("email", "")[:320] or None,
                             untrusted.get("plan", "")[:32] or None,
                             Status(status) if status else None,
                             text=untrusted.get("q", "")[:directory.LONGEST_TEXT + 1] or None),
            limit=50, cursor=untrusted.get("cursor", "")[:512] or None)
    except InvalidBody as error:  # the page says what to change, with the form as it was
        return render_template("console/search.html", page=Page([], None), query=untrusted,
                               refused=error.detail), 422
    trail.saw([user.id for user in found.items])
    return render_template("console/search.html", page=found, query=untrusted)


@bp.get("/users/<user_id>")
def account(user_id: str) -> str:
    user = directory.require_user(user_id)
    reads = request.args.get("include_reads") == "1"
    return render_template(
        "console/account.html", profile=directory.profile(user),
        sessions=sessions.live_sessions(user.id), changes=CHANGES, include_reads=reads,
        events=activity.account_events(user.id, activity.EventFilter(reads=reads),
                                       RECENT_EVENTS).items)


@bp.route("/users/<user_id>/<change>", methods=["GET", "POST"])
def confirm(user_id: str, change: str) -> str | Response:
    user, chosen = directory.require_user(user_id), CHANGES.get(change)
    if chosen is None:
        abort(404)
    operator, form = _operator(), ConfirmForm(plan=user.plan, full_name=user.full_name)
    if form.validate_on_submit():
        try:
            operators.prove_presence(operator.user, operator.auth_session, form.code.data)
            chosen.run(user, operators.acting(operator.user, client_info()), form)
        except (StepUpRequired, InvalidSecondFactor, InvalidBody) as error:
            form.form_errors.append(error.detail)
        else:
            flash(f"Done: {chosen.title.lower()}.")
            return redirect(url_for("console.account", user_id=user.id))
    return render_template("console/confirm.html", user=user, change=chosen, form=form,
                           recent=operators.may_change_now(operator.auth_session))

