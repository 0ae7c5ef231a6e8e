"""The account page's life changes: a new address, leaving, the data download, a first password;
and the pages the mailed links open (each a button: opening a link changes nothing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from flask import flash, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString
from werkzeug.wrappers import Response

from app.domain.audit import ClientInfo
from app.domain.clients import sites
from app.domain.errors import AuthError
from app.domain.factors import passkey_proof
from app.domain.lifecycle import address_change, export, first_password, leaving, proof
from app.domain.text import N_
from app.models import User
from app.pages.blueprint import bp, words
from app.pages.forms import (
    LEAVE_WORD,
    EmailChangeForm,
    LeaveForm,
    MailedLinkForm,
    SetPasswordForm,
    required_text,
)
from app.web import browser, ratelimits
from app.web.browser import login_required
from app.web.client import client_info


def _signed_in() -> browser.BrowserUser:
    signed_in = browser.current()
    assert signed_in is not None  # @login_required ran first
    return signed_in


def _proved(form: EmailChangeForm | LeaveForm, *, recent_suffices: bool) -> User:
    signed_in = _signed_in()
    return proof.proved_owner(signed_in.auth_session.id, signed_in.user.id, client_info(),
                              password=form.password.data or None,
                              code=form.code.data or None,
                              passkey_answer=form.credential.data or None,
                              recent_suffices=recent_suffices)


@bp.post("/account/passkeys/proof/options")
@login_required
@ratelimits.passkey_options
def passkey_proof_options() -> Response | tuple[Response, int]:
    """The options of the passkey that stands in for the password of an account without one."""
    try:
        return Response(passkey_proof.options(_signed_in().user), mimetype="application/json",
                        headers={"Cache-Control": "no-store"})
    except AuthError as error:
        return jsonify(error=words(error.detail)), error.status


@bp.post("/account/password/set")
@login_required
@ratelimits.change_password
def set_password() -> Response:
    form, signed_in = SetPasswordForm(), _signed_in()
    try:
        if not form.validate_on_submit():
            raise AuthError(N_("Enter the new password."))
        first_password.add_password(signed_in.auth_session.id, signed_in.user.id,
                                    required_text(form.new_password), client_info(),
                                    code=form.code.data or None,
                                    passkey_answer=form.credential.data or None)
    except AuthError as error:
        flash(_words(error))
    else:
        flash(_("Password set. You can now sign in with it too."))
    return redirect(url_for(".account"))


@bp.post("/account/email")
@login_required
@ratelimits.change_password
def change_email() -> Response:
    form = EmailChangeForm()
    try:
        if not form.validate_on_submit():
            raise AuthError(N_("Enter the new address (and your password)."))
        # The password (or a second factor's code), never only a recent sign-in: a stolen
        # session must not move the account where its owner's undo link is all that is left.
        address_change.request_change(_proved(form, recent_suffices=False),
                                      form.new_email.data or "", client_info())
    except AuthError as error:
        flash(_words(error))
    else:
        flash(_("A link is on its way to the new address: the address changes when you open it."))
    return redirect(url_for(".account"))


@bp.post("/account/delete")
@login_required
@ratelimits.change_password
def leave() -> Response | str:
    # The family site the account page was opened from (`/account?site=<name>`), carried by
    # the form: the closed account's page leads back there.
    site = sites.family_site(request.args.get("site"))
    form = LeaveForm()
    try:
        if not form.validate_on_submit() or (form.confirm_word.data or "").strip().lower() \
                not in (LEAVE_WORD, _(LEAVE_WORD).lower()):  # the word in English or as shown
            raise AuthError(N_("Type “%(word)s” to confirm.", word=_(LEAVE_WORD)))
        user = _proved(form, recent_suffices=True)
        leaving.schedule_deletion(user, client_info())
    except AuthError as error:
        flash(_words(error))
        return redirect(url_for(".account", site=site.name if site else None))
    browser.sign_out()
    return render_template("pages/left.html", email=user.email, site=site,
                           erase_after=datetime.fromisoformat(leaving.erase_after(user) or ""))


@bp.get("/account/export")
@login_required
@ratelimits.export_page
def export_account() -> Response:
    response = jsonify(export.export(_signed_in().user, client_info()))
    response.headers["Content-Disposition"] = 'attachment; filename="account.json"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _words(error: AuthError) -> str:
    details = [words(e["detail"]) for e in getattr(error, "errors", [])]
    return "; ".join(details) or words(error.detail)


# The mailed links ------------------------------------------------------------------------------

@dataclass(frozen=True)
class MailedLink:
    title: LazyString
    button: LazyString
    use: Callable[[str, ClientInfo], User]
    done: str  # what the page says once the link is used: a message, with %(email)s


LINKS = {
    "/email-change": MailedLink(_l("Confirm your new address"), _l("Use this address"),
                                address_change.confirm_change,
                                N_("Your account's address is now %(email)s.")),
    "/email-change/undo": MailedLink(
        _l("Give your account its address back"), _l("Give the address back"),
        address_change.undo_change,
        N_("Your account's address is %(email)s again, and every device is signed out. Its "
           "password was removed, since whoever moved the account knew it: choose a new one "
           "with “Forgot your password?” on the sign-in page.")),
    "/account/restore": MailedLink(_l("Restore your account"), _l("Restore my account"),
                                   leaving.restore,
                                   N_("Your account %(email)s is back. Sign in to use it.")),
}


def _mailed_link() -> str | tuple[str, int]:
    link = LINKS[request.path]
    form = MailedLinkForm(token=request.args.get("token", ""))
    if request.method == "POST" and form.validate_on_submit():
        try:
            user = link.use(form.token.data or "", client_info())
        except AuthError as error:
            return render_template("pages/mailed_link.html", link=link, error=error), \
                error.status
        return render_template("pages/mailed_link.html", link=link,
                               done=_(link.done, email=user.email))
    moving = (address_change.account_moving(form.token.data or "")
              if request.path == "/email-change" else None)
    return render_template("pages/mailed_link.html", link=link, form=form, moving=moving)


for _path in LINKS:
    bp.add_url_rule(_path, f"mailed_link_{_path.strip('/').replace('/', '_')}",
                    _mailed_link, methods=["GET", "POST"])
