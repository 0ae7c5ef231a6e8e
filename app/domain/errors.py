"""Typed errors of the domain, each with a stable code and an HTTP status: the domain raises
them, each surface answers them (app/web/errors.py, app/pages/)."""

from typing import Any

from app.domain.text import N_


class AuthError(Exception):
    status = 400
    code = "bad_request"
    detail: str = N_("The request could not be processed.")
    retry_after: int | None = None  # seconds: every surface answers it with Retry-After

    def members(self) -> dict[str, Any]:
        """What the API's problem body says besides its type, title, status, code and detail."""
        return {}

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.detail)
        if detail:
            self.detail = detail


class InvalidBody(AuthError):
    status = 422
    code = "invalid_body"
    detail = N_("The request body is invalid.")

    def __init__(self, detail: str | None = None, errors: list[dict[str, str]] | None = None):
        super().__init__(detail)
        self.errors = errors or []

    def members(self) -> dict[str, Any]:
        return {"errors": self.errors} if self.errors else {}


class InvalidQuery(InvalidBody):
    """A query parameter is wrong. The code stays `invalid_body` (codes are stable, and clients
    already handle it on 422); the detail no longer blames a body the request may not have."""

    detail = N_("A query parameter is invalid.")


class WeakPassword(InvalidBody):
    def __init__(self, reason: str, pointer: str = "#/password"):
        super().__init__(reason, [{"pointer": pointer, "detail": reason}])


class InvalidCredentials(AuthError):
    status = 401
    code = "invalid_credentials"
    detail = N_("Incorrect email or password.")


class BearerError(AuthError):
    """A 401 on a bearer-protected endpoint: answered with WWW-Authenticate: Bearer."""

    status = 401


class MissingToken(BearerError):
    code = "missing_token"
    detail = N_("An access token is required.")


class InvalidToken(BearerError):
    code = "invalid_token"
    detail = N_("The access token is invalid.")


class InsufficientScope(BearerError):
    """An access token that was not issued to an OpenID Connect client with `openid`, at
    /oauth2/userinfo, or without the admin scope an admin endpoint needs (RFC 6750 §3.1)."""

    status = 403
    code = "insufficient_scope"
    detail = N_("The access token was not issued for the openid scope.")
    scope = "openid"  # the scope the endpoint needs

    def __init__(self, scope: str | None = None) -> None:
        super().__init__(f"This needs a token with the {scope} scope." if scope else None)
        self.scope = scope or self.scope


class TokenExpired(BearerError):
    code = "token_expired"
    detail = N_("The access token has expired.")


class SessionRevoked(BearerError):
    code = "session_revoked"
    detail = N_("This session has ended. Sign in again.")


class InvalidRefreshToken(AuthError):
    status = 401
    code = "invalid_token"
    detail = N_("The refresh token is invalid or has expired.")


class EmailTaken(AuthError):
    status = 409
    code = "email_taken"
    detail = N_("An account with this email already exists.")


class NotFound(AuthError):
    status = 404
    code = "not_found"
    detail = N_("There is nothing here.")


class InvalidRedirectUri(AuthError):
    status = 400
    code = "invalid_redirect_uri"
    detail = N_("redirect_uri is not registered for any client site.")


class UnknownCallback(AuthError):
    status = 400
    code = "unknown_callback"
    detail = N_("callback does not name a registered client site.")


class InvalidRequest(AuthError):
    status = 400
    code = "invalid_request"
    detail = N_("The request is missing a parameter or has an invalid one.")


class InvalidRequestUri(AuthError):
    """A pushed authorization request (RFC 9126) that is unknown, another client's, expired or
    already used."""

    status = 400
    code = "invalid_request_uri"
    detail = N_("This sign-in request expired or was already used. Go back to the site you came "
              "from and start again.")


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


class InvalidCode(AuthError):
    status = 401
    code = "invalid_code"
    detail = N_("The code is invalid, expired or already used.")


class LastSignInMethod(AuthError):
    status = 409
    code = "last_sign_in_method"
    detail = N_("This is the account's only way to sign in: set a password or link another first.")


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


class EmailNotConfirmed(AuthError):
    status = 403
    code = "email_not_confirmed"
    detail = N_("Confirm your email address first: we sent you a link.")


class IdentityInUse(ProviderSignInRefused):
    code = "identity_in_use"
    detail = N_("This account at the provider is already linked to another account here.")
    notice = N_("That provider account is already linked to another account.")


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


class RateLimited(AuthError):
    """Too many attempts: answered 429 with Retry-After, before any password is hashed."""

    status = 429
    code = "rate_limited"
    detail = N_("Too many attempts. Try again later.")
    retry_after: int  # always set: every 429 says when to try again

    def __init__(self, retry_after: int, detail: str | None = None) -> None:
        super().__init__(detail)
        self.retry_after = max(1, retry_after)

    def members(self) -> dict[str, Any]:
        return {"retry_after": self.retry_after}  # the same contract as flask-limiter's 429s


class TooManyPushedRequests(RateLimited):
    """As many pushed authorization requests wait as a client, or an address, may have."""

    detail = N_("Too many pushed authorization requests are waiting. Try again later.")


def refusal_notice(code: str | None) -> str | None:
    """The hosted pages' words for a provider sign-in refused with `code`, if it is one."""
    refusals = (ProviderSignInRefused, AccountExists, AccountEmailNotVerified,
                LinkNeedsRecentSignIn, ProviderEmailNotVerified, ProviderFailed, IdentityInUse,
                TakeOverNeedsSecondFactor)
    return next((refusal.notice for refusal in refusals if refusal.code == code), None)
