"""The refusals of second factors, passkeys and the second step of a sign-in (factors/)."""

from __future__ import annotations

from typing import Any

from app.domain.errors import AuthError
from app.domain.text import N_


class LastSignInMethod(AuthError):
    """Removing it would leave the account no way in (a provider's or a passkey, with no
    password): accounts/identities.py and factors/passkeys.py refuse it alike."""

    status = 409
    code = "last_sign_in_method"
    detail = N_("This is the account's only way to sign in: set a password or link another first.")


class MfaRequired(AuthError):
    """API v1 cannot do a second step: its clients are sent to the hosted login instead."""

    status = 403
    code = "mfa_required"
    detail = N_("This account has a second factor. Sign in on the hosted login page, which can "
              "ask for it.")

    def __init__(self, login_url: str) -> None:
        super().__init__()
        self.login_url = login_url

    def members(self) -> dict[str, Any]:
        return {"login_url": self.login_url}  # where the person can give the second factor


class InvalidMfaToken(AuthError):
    status = 401
    code = "invalid_mfa_token"
    detail = N_("This sign-in has expired or was already completed. Sign in again.")


class InvalidSecondFactor(AuthError):
    status = 401
    code = "invalid_second_factor"
    detail = N_("That code is not right, or was already used.")


class FactorNeedsConfirmedEmail(AuthError):
    """A second factor belongs on an account whose address someone has proved: on one nobody has
    (signed up, perhaps, with another person's address) it would be the squatter's, and outlive
    the owner's reset."""

    status = 403
    code = "confirm_email_first"
    detail = N_("Confirm your email address before adding a second factor: use the link we "
                "mailed you.")


class FactorNeedsProvedPassword(AuthError):
    """The address was proved, but not by whoever set the password: someone who signed up with
    another person's address keeps their password when the owner clicks the confirmation link,
    and a factor they added then would outlive the owner's reset (and a passkey sign in alone)."""

    status = 403
    code = "prove_account_first"
    detail = N_("Before adding a second factor, show that this account is yours: send yourself a "
              "confirmation link from your account page and open it in the same browser.")


class AlreadyEnrolled(AuthError):
    status = 409
    code = "already_enrolled"
    detail = N_("This account already has an authenticator app. Remove it first.")


class NotEnrolled(AuthError):
    status = 409
    code = "not_enrolled"
    detail = N_("This account has no authenticator app.")


class InvalidPasskey(AuthError):
    status = 401
    code = "invalid_passkey"
    detail = N_("That passkey could not sign you in. Try again, or sign in another way.")


class TooManyPasskeys(AuthError):
    status = 409
    code = "too_many_passkeys"
    detail = N_("This account has as many passkeys as it may hold: remove one first.")


class StepUpRequired(AuthError):
    status = 403
    code = "step_up_required"
    detail = N_("Sign in again, or enter a code of your second factor, to do this.")
