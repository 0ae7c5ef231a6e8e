"""The refusals of accounts: passwords, addresses, providers' identities and the mailed links
(accounts/)."""

from __future__ import annotations

from app.domain.errors import AuthError, InvalidBody
from app.domain.text import N_


class WeakPassword(InvalidBody):
    def __init__(self, reason: str, pointer: str = "#/password"):
        super().__init__(reason, [{"pointer": pointer, "detail": reason}])


class InvalidCredentials(AuthError):
    status = 401
    code = "invalid_credentials"
    detail = N_("Incorrect email or password.")


class EmailTaken(AuthError):
    status = 409
    code = "email_taken"
    detail = N_("An account with this email already exists.")


class UnknownProvider(AuthError):
    status = 404
    code = "unknown_provider"
    detail = N_("There is no such sign-in provider.")


class ProviderNotEnabled(AuthError):
    status = 404
    code = "provider_not_enabled"
    detail = N_("Sign-in with this provider is not set up on this service.")


class InvalidState(AuthError):
    status = 400
    code = "invalid_state"
    detail = N_("This sign-in attempt is unknown, was already used, or was started in another "
              "browser. Start again from the site you came from.")


class ProviderSignInRefused(AuthError):
    """The provider said who the person is, but we will not sign them in. `code` travels back
    to the client site as `?error=`."""

    status = 403
    code = "access_denied"
    detail = N_("Sign-in was refused.")
    # What the hosted pages say when the refusal brings a person back to them (?error=code).
    notice = N_("Sign-in was cancelled or refused.")


class AccountExists(ProviderSignInRefused):
    code = "account_exists"
    detail = N_("An account with this email already exists. Sign in with your password, then link "
              "this provider from your account page.")
    notice = N_("An account with this email already exists. Sign in with your password, then link "
              "the provider from your account page.")


class AccountNeedsProof(AccountExists):
    """A provider's verified address belongs to an account whose password may have been set by
    someone else (before the address was proved). The person proves they hold that password, or
    takes the account over, which removes the password and ends every session."""

    detail = N_("An account with this email already exists. Enter its password to link this "
              "provider, or continue with the provider alone.")

    def __init__(self, user_id: str) -> None:
        super().__init__()
        self.user_id = user_id


class TakeOverNeedsSecondFactor(ProviderSignInRefused):
    """A provider alone may not take over an account that has a second factor: taking over
    removes its password and providers, which only its owner, with the factor, may do."""

    code = "second_factor_first"
    detail = N_("This account has a second factor. Sign in with its password and your code, "
              "then link the provider from your account page.")
    notice = detail


class AccountEmailNotVerified(ProviderSignInRefused):
    code = "confirm_email_first"
    detail = N_("Confirm your email address before linking a sign-in provider.")
    notice = N_("Confirm your email address before linking a sign-in provider: use the link we "
              "mailed you.")


class LinkNeedsRecentSignIn(ProviderSignInRefused):
    """StepUpRequired, for a link from the account page: it comes back there as a refusal."""

    code = "step_up_required"
    detail = N_("Sign in again to link a sign-in provider.")
    notice = N_("To link a sign-in provider, sign in again first.")


class ProviderEmailNotVerified(ProviderSignInRefused):
    code = "email_not_verified"
    detail = N_("The provider has not verified this email address. Verify it there, then try "
                "again.")
    notice = N_("The provider has not verified your email address. Verify it there, then try "
                "again.")


class ProviderFailed(ProviderSignInRefused):
    status = 502
    code = "provider_error"
    detail = N_("The sign-in provider did not answer as expected. Try again.")
    notice = detail


class InvalidResetToken(AuthError):
    status = 400
    code = "invalid_reset_token"
    detail = N_("This reset link is invalid, expired or already used. Ask for a new one.")


class InvalidConfirmationToken(AuthError):
    status = 400
    code = "invalid_confirmation_token"
    detail = N_("This confirmation link is invalid, expired or already used. Ask for a new one.")


class IdentityInUse(ProviderSignInRefused):
    code = "identity_in_use"
    detail = N_("This account at the provider is already linked to another account here.")
    notice = N_("That provider account is already linked to another account.")


def refusal_notice(code: str | None) -> str | None:
    """The hosted pages' words for a provider sign-in refused with `code`, if it is one."""
    refusals = (ProviderSignInRefused, AccountExists, AccountEmailNotVerified,
                LinkNeedsRecentSignIn, ProviderEmailNotVerified, ProviderFailed, IdentityInUse,
                TakeOverNeedsSecondFactor)
    return next((refusal.notice for refusal in refusals if refusal.code == code), None)
