"""The hosted pages' forms (Flask-WTF: every one carries a CSRF token)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, Length, Regexp

# As the API's schemas: no NUL or other control character in a name or an address (PostgreSQL
# cannot even store a NUL, so without this a hostile form would reach a 500).
PRINTABLE = Regexp(r"^[^\x00-\x1f\x7f]*$", message="Remove the control characters.")


class LoginForm(FlaskForm):  # type: ignore[misc]
    email = EmailField("Email", validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "username", "autocapitalize": "none"})
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1024)],
                             render_kw={"autocomplete": "current-password"})


class SignupForm(FlaskForm):  # type: ignore[misc]
    full_name = StringField("Name", validators=[Length(max=200), PRINTABLE],
                            render_kw={"autocomplete": "name"})
    email = EmailField("Email", validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "email", "autocapitalize": "none"})
    password = PasswordField("Password", validators=[DataRequired(), Length(max=1024)],
                             render_kw={"autocomplete": "new-password", "minlength": 8},
                             description="At least 8 characters. A few unusual words work well.")


class ForgotPasswordForm(FlaskForm):  # type: ignore[misc]
    email = EmailField("Email", validators=[DataRequired(), Length(max=320), PRINTABLE],
                       render_kw={"autocomplete": "email", "autocapitalize": "none"})


class ResetPasswordForm(FlaskForm):  # type: ignore[misc]
    new_password = PasswordField("New password", validators=[DataRequired(), Length(max=1024)],
                                 render_kw={"autocomplete": "new-password", "minlength": 8})


class ChangePasswordForm(FlaskForm):  # type: ignore[misc]
    current_password = PasswordField("Current password",
                                     validators=[DataRequired(), Length(max=1024)],
                                     render_kw={"autocomplete": "current-password"})
    new_password = PasswordField("New password", validators=[DataRequired(), Length(max=1024)],
                                 render_kw={"autocomplete": "new-password", "minlength": 8})


class ActionForm(FlaskForm):  # type: ignore[misc]
    """A button that changes something (sign out, unlink...): only its CSRF token."""
