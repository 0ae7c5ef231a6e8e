"""The refusals of signing in with a mailed code (accounts/email_sign_in.py)."""

from __future__ import annotations

from app.domain.errors import AuthError
from app.domain.sessions.errors import InvalidCode
from app.domain.text import N_


class InvalidEmailCode(InvalidCode):
    """A wrong, used or expired code, a code of an address with no account, or of a disabled
    one: one answer for all, as a wrong password (401 `invalid_code`, as a handoff code's)."""

    detail = N_("This code is wrong, expired or already used. Ask for a new one.")


class EmailCodeOff(AuthError):
    """Signing in with a mailed code is turned off (SVC_EMAIL_CODE_SIGN_IN, or the site's
    `email_code_sign_in`)."""

    status = 403
    code = "email_code_off"
    detail = N_("Signing in with an emailed code is not available here. Use your password.")
