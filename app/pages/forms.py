"""The hosted pages' forms (Flask-WTF: every one carries a CSRF token)."""

from __future__ import annotations

from typing import cast

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import BooleanField, EmailField, Field, HiddenField, PasswordField, StringField
from wtforms.validators import DataRequired, Length, Regexp, ValidationError

from app.domain import addresses, text
from app.domain.accounts import providers
from app.domain.errors import InvalidBody
from app.domain.factors import passkeys
from app.domain.text import N_
from app.web.page_forms import PageForm

# The characters we accept, as in the API's schemas (app/domain/text.py): without this a NUL
# in a form would reach PostgreSQL, which cannot store one, and become a 500.
PRINTABLE = Regexp(text.PRINTABLE_TEXT, message=_l("Remove the control and formatting characters."))
ONE_TIME_CODE = {"autocomplete": "one-time-code", "autocapitalize": "none", "spellcheck": "false"}
PASSWORD = [DataRequired(), Length(max=1024),
            Regexp(text.NO_NUL, message=_l("A password cannot hold a NUL character."))]


def well_formed_address(_form: FlaskForm, field: Field) -> None:
    """A field error for an address that is no address (once the others have said theirs)."""
    if field.errors:
        return
    try:
        addresses.require_well_formed(field.data or "")
    except InvalidBody as error:
        raise ValidationError(error.detail) from None


class LoginForm(PageForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "username webauthn",  # passkeys offered too
                                  "autocapitalize": "none"})
    password = PasswordField(_l("Password"), validators=PASSWORD,
                             render_kw={"autocomplete": "current-password"})
    keep = BooleanField(_l("Keep me signed in"),
                        description=_l("On this device for 30 days. Unticked: until you close the "
                                       "browser, 12 hours at most."))


# A person's name: the rule of the API's schemas and of accounts.check_name.
NAME = [Length(max=providers.MAX_NAME_LENGTH), PRINTABLE]


class SignupForm(PageForm):
    full_name = StringField(_l("Name"), validators=NAME, render_kw={"autocomplete": "name"})
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "email", "autocapitalize": "none"})
    password = PasswordField(_l("Password"), validators=PASSWORD,
                             render_kw={"autocomplete": "new-password", "minlength": 8},
                             description=_l("At least 8 characters. A few unusual words "
                                            "work well."))


class NameForm(PageForm):
    """The account page's name: empty is allowed (no name), as at sign-up."""

    full_name = StringField(_l("Name"), validators=NAME, render_kw={"autocomplete": "name"})


class PasskeySignupForm(PageForm):
    """A passkey-first sign-up's first step: the address its code goes to."""

    full_name = StringField(_l("Name"), validators=[Length(max=200), PRINTABLE],
                            render_kw={"autocomplete": "name"})
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "email", "autocapitalize": "none"})


class SignupCodeForm(PageForm):
    """Its second step: the code mailed to the address (carried in the form)."""

    full_name = HiddenField(validators=[Length(max=200), PRINTABLE])
    email = HiddenField(validators=[DataRequired(), Length(max=320), PRINTABLE])
    code = StringField(_l("Code from the email"), validators=[DataRequired(), Length(max=32),
                                                            PRINTABLE], render_kw=ONE_TIME_CODE)


class LinkPasswordForm(PageForm):
    """Prove an existing account's password to link a provider to it."""

    password = PasswordField(_l("Password of this account"), validators=PASSWORD,
                             render_kw={"autocomplete": "current-password"})


class ForgotPasswordForm(PageForm):
    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320), PRINTABLE,
                                            well_formed_address],
                       render_kw={"autocomplete": "email", "autocapitalize": "none"})


class EmailCodeForm(PageForm):
    """The address to mail a sign-in code to."""

    email = EmailField(_l("Email"), validators=[DataRequired(), Length(max=320), PRINTABLE,
                                            well_formed_address],
                       render_kw={"autocomplete": "username", "autocapitalize": "none"})


class EmailCodeEntryForm(PageForm):
    code = StringField(_l("Code from the email"),
                       validators=[DataRequired(), Length(max=32), PRINTABLE],
                       render_kw={**ONE_TIME_CODE, "inputmode": "numeric"})


class ResetPasswordForm(PageForm):
    new_password = PasswordField(_l("New password"), validators=PASSWORD,
                                 render_kw={"autocomplete": "new-password", "minlength": 8})


class ChangePasswordForm(PageForm):
    current_password = PasswordField(_l("Current password"),
                                     validators=PASSWORD,
                                     render_kw={"autocomplete": "current-password"})
    new_password = PasswordField(_l("New password"), validators=PASSWORD,
                                 render_kw={"autocomplete": "new-password", "minlength": 8})
    # Shown to an account with a second factor whose sign-in is not recent (step-up).
    second_factor_code = StringField(
        _l("Code from your authenticator app, or a recovery code"),
        validators=[Length(max=32), PRINTABLE], render_kw=ONE_TIME_CODE)


class SecondFactorForm(PageForm):
    """A code of the second factor: from the authenticator app, or a recovery code."""

    code = StringField(_l("Code"), validators=[DataRequired(), Length(max=32), PRINTABLE],
                       render_kw=ONE_TIME_CODE,
                       description=_l("The 6-digit code your authenticator app shows, or one "
                                      "of your recovery codes."))


class TotpSetupForm(PageForm):
    """The first code of a new authenticator app, which turns it on."""

    code = StringField(_l("Code"), validators=[DataRequired(), Length(max=32), PRINTABLE],
                       render_kw={**ONE_TIME_CODE, "inputmode": "numeric"},
                       description=_l("The 6-digit code the app shows for this account."))


class StepUpForm(PageForm):
    """A change to how the account signs in: a fresh code, unless the sign-in is recent."""

    code = StringField(_l("Code from your authenticator app, or a recovery code"),
                       validators=[Length(max=32), PRINTABLE], render_kw=ONE_TIME_CODE)


class PasskeyAnswerForm(PageForm):
    """A passkey's answer to a ceremony, as JSON (static/passkeys.js puts it in)."""

    credential = HiddenField(validators=[DataRequired(), Length(max=60 * 1024)])


def passkey_form(form_class: type[PasskeyAnswerForm]) -> PasskeyAnswerForm | None:
    """A page's passkey form, where browsers can use passkeys for this service (or None: the
    page then loads no script, and keeps the strict CSP)."""
    return form_class() if passkeys.available() else None


class PasskeyAddForm(PasskeyAnswerForm):
    name = StringField(_l("Name it"), validators=[Length(max=64), PRINTABLE],
                       render_kw={"autocomplete": "off"},
                       description=_l("So you can tell it from others, e.g. “Work laptop”."))


class ActionForm(PageForm):
    """A button that changes something (sign out, unlink...): only its CSRF token."""


def field_errors(form: FlaskForm, error: InvalidBody) -> None:
    """Put the domain's errors next to the fields they point at."""
    for item in error.errors or [{"pointer": "", "detail": error.detail}]:
        field = getattr(form, item["pointer"].removeprefix("#/"), None)
        if field is not None:
            add_error(field, item["detail"])
        else:
            form.form_errors.append(item["detail"])


def add_error(field: Field, message: str) -> None:
    """Show `message` under a field of a validated form. (Validation made its errors a list;
    WTForms types them as any sequence, as they are a tuple before.)"""
    cast(list[str], field.errors).append(message)


def required_text(field: Field) -> str:
    """What a DataRequired field of a validated form holds: text, never None."""
    assert isinstance(field.data, str)
    return field.data


class OwnerProofForm(PageForm):
    """The owner's proof before a new address or leaving: the password, or for an account
    without one a code; neither after a sign-in of the last few minutes."""

    password = PasswordField(_l("Your password"), validators=[Length(max=1024)],
                             render_kw={"autocomplete": "current-password"})
    code = StringField(_l("Code from your authenticator app, or a recovery code"),
                       validators=[Length(max=32), PRINTABLE], render_kw=ONE_TIME_CODE)
    # Or one of its passkeys' answer (static/passkeys.js puts it in): factors/passkey_proof.py.
    credential = HiddenField(validators=[Length(max=60 * 1024)])


class SetPasswordForm(OwnerProofForm):
    """A first password, for an account that has none (lifecycle/first_password.py)."""

    new_password = PasswordField(_l("New password"), validators=PASSWORD,
                                 render_kw={"autocomplete": "new-password", "minlength": 8})


class EmailChangeForm(OwnerProofForm):
    new_email = EmailField(_l("New email address"),
                           validators=[DataRequired(), Length(max=320), PRINTABLE],
                           render_kw={"autocomplete": "email", "autocapitalize": "none"})


LEAVE_WORD = N_("delete")  # typed to confirm: in English, or as the page shows it


class LeaveForm(OwnerProofForm):
    confirm_word = StringField(_l("Type “%(word)s” to confirm", word=_l(LEAVE_WORD)),
                               validators=[DataRequired(), Length(max=32), PRINTABLE],
                               render_kw={"autocomplete": "off", "autocapitalize": "none"})


class MailedLinkForm(PageForm):
    """A mailed link's token, carried from its page to the button that uses it: opening a
    link changes nothing, so a mail scanner that follows it does no harm."""

    token = HiddenField(validators=[DataRequired(), Length(max=512), PRINTABLE])
