"""Finishing a sign-in, as values. The ways in are here: a password (at sign-up too), a
provider's identity, a passkey; each room only says whose account it proved (accounts,
factors) and this module finishes it in the same unit of work. A `SignIn` names where it goes
(sessions/destinations.py) and its type says what that opens: tokens (`ApiSignIn`), this
browser's session (`HereSignIn`) or a code for a client site (`SiteSignIn`). `finish` opens it,
or, for an account with a second factor still to prove, a pending sign-in that keeps the
destination (factors/pending.py) until `complete_second_step` opens it. Either way the surface
gets one outcome to answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from app.db.transactions import kept, writes
from app.domain import new_devices
from app.domain.accounts import accounts, identities, passkey_signup
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.domain.factors import codes, passkeys, pending, second_factors
from app.domain.factors.pending import Check, SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.limits import throttle
from app.domain.sessions import browser_sessions, handoff, sessions
from app.domain.sessions.browser_sessions import BrowserSignIn
from app.domain.sessions.destinations import Destination, ToApi, ToBrowser, ToSite
from app.domain.sessions.errors import EmailNotConfirmed
from app.domain.sessions.sessions import IssuedTokens
from app.models import AuthSession, User


@dataclass(frozen=True)
class SiteCode:
    """A code for a client site (ToSite), and the way its sign-in came in."""

    code: str
    provider: str


Opened = IssuedTokens | BrowserSignIn | SiteCode
Outcome = Opened | SecondFactorRequired
O_co = TypeVar("O_co", bound=Opened, covariant=True)
Opens = TypeVar("Opens", bound=Opened)


@dataclass(frozen=True, kw_only=True)
class SignIn(Generic[O_co]):
    """A sign-in about to be finished: where it goes (its subclass says what that opens) and
    for which client."""

    destination: Destination
    client: ClientInfo

    @property
    def second_step(self) -> Purpose:
        """Where an account with a second factor proves it: an API client in the API, a
        browser on the hosted pages."""
        return Purpose.API if isinstance(self.destination, ToApi) else Purpose.HOSTED

    @writes
    def finish(self, user: User, provider: str) -> O_co | SecondFactorRequired:
        """Open what the sign-in goes to, or a pending sign-in for an account with a second
        factor (its first factor, `provider`, just proved), in one unit of work (or the
        caller's)."""
        if second_factors.has_second_factor(user):
            return pending.begin(user, provider, self.second_step, self.destination)
        return self.open(user, provider)

    @writes
    def open(self, user: User, provider: str, second_factor: str | None = None) -> O_co:
        """Open what the sign-in goes to, with nothing more to prove, in one unit of work (or
        the caller's): `second_factor` is the one it proved, if any (a new account has none)."""
        if new_devices.is_new(user, self.client):
            new_devices.tell_owner(user, self.client)
        return self._opened(user, provider, second_factor)

    def _opened(self, user: User, provider: str, second_factor: str | None) -> O_co:
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class ApiSignIn(SignIn[IssuedTokens]):
    """A session and its first tokens, for the API client that signed in."""

    destination: ToApi = field(default_factory=ToApi)

    def _opened(self, user: User, provider: str, second_factor: str | None) -> IssuedTokens:
        return sessions.issue_tokens(user, provider, self.client, second_factor=second_factor)


@dataclass(frozen=True, kw_only=True)
class HereSignIn(SignIn[BrowserSignIn]):
    """This browser's session, replacing the one it held (and a code for a client site)."""

    destination: ToBrowser
    replacing: AuthSession | None = None

    def _opened(self, user: User, provider: str, second_factor: str | None) -> BrowserSignIn:
        return browser_sessions.open_browser_session(
            user, provider, self.client, replacing=self.replacing,
            hand_to=self.destination.hand_to, second_factor=second_factor,
            kept=self.destination.kept)


@dataclass(frozen=True, kw_only=True)
class SiteSignIn(SignIn[SiteCode]):
    """A code for a client site, and no session here."""

    destination: ToSite

    def _opened(self, user: User, provider: str, second_factor: str | None) -> SiteCode:
        return SiteCode(handoff.issue_code(user, provider, self.destination.hand_to,
                                           second_factor=second_factor), provider)


def to(destination: Destination, client: ClientInfo,
       replacing: AuthSession | None = None) -> SignIn[Opened]:
    """The sign-in of a destination kept in a pending sign-in's row."""
    if isinstance(destination, ToApi):
        return ApiSignIn(client=client)
    if isinstance(destination, ToBrowser):
        return HereSignIn(destination=destination, client=client, replacing=replacing)
    return SiteSignIn(destination=destination, client=client)


# The ways in ---------------------------------------------------------------------------------

def sign_up(untrusted_email: str, password: str, full_name: str, sign_in: SignIn[Opens], *,
            language: str | None = None) -> tuple[User, Opens | None]:
    """Register an account (accounts.register, in `language`: the one the person signed up
    in) and, unless the address must be confirmed first, open its sign-in, in one unit of
    work."""
    email, password_hash = accounts.prepare(untrusted_email, password)
    return _sign_up(email, password_hash, full_name, sign_in, language)


@writes
def _sign_up(email: str, password_hash: str | None, full_name: str, sign_in: SignIn[Opens],
             language: str | None) -> tuple[User, Opens | None]:
    user = accounts.register(email, password_hash, full_name, sign_in.client, language=language)
    if not sessions.may_open_session(user):
        return user, None
    return user, sign_in.open(user, "password")


def sign_up_with_code(untrusted_email: str, untrusted_code: str, full_name: str,
                      sign_in: SignIn[Opens], language: str | None = None
                      ) -> tuple[User, Opens | SecondFactorRequired]:
    """A passkey-first sign-up (accounts/passkey_signup.py): with the code mailed to the
    address, the account (its address proved, no password) and its sign-in, in one unit of
    work."""
    email = passkey_signup.redeem(untrusted_email, untrusted_code)
    return _signed_up_with_code(email, full_name, sign_in, language)


@writes
def _signed_up_with_code(email: str, full_name: str, sign_in: SignIn[Opens],
                         language: str | None) -> tuple[User, Opens | SecondFactorRequired]:
    user = passkey_signup.create(email, full_name, sign_in.client, language)
    return user, sign_in.finish(user, passkey_signup.PROVIDER)


@writes
def with_provider(profile: Profile, sign_in: SignIn[Opens], *,
                  language: str | None = None) -> Opens | SecondFactorRequired:
    """Sign in with a provider's identity (identities.account_for: a new account in
    `language`), in one unit of work."""
    return sign_in.finish(identities.account_for(profile, sign_in.client, language),
                          profile.provider)


def link_with_password(user_id: str, profile: Profile, password: str, device: throttle.Device,
                       sign_in: SignIn[Opens]) -> Opens | SecondFactorRequired:
    """Finish an AccountNeedsProof with the account's password (identities.check_password)."""
    identities.check_password(user_id, profile, password, sign_in.client, device)
    return _linked(user_id, profile, sign_in, take_over=False)


def link_taking_over(user_id: str, profile: Profile,
                     sign_in: SignIn[Opens]) -> Opens | SecondFactorRequired:
    """Finish an AccountNeedsProof without the password (identities.check_take_over)."""
    identities.check_take_over(user_id, profile)
    return _linked(user_id, profile, sign_in, take_over=True)


@writes
def _linked(user_id: str, profile: Profile, sign_in: SignIn[Opens], *,
            take_over: bool) -> Opens | SecondFactorRequired:
    user = identities.link_proved(user_id, profile, sign_in.client, take_over=take_over)
    return sign_in.finish(user, profile.provider)


@writes
def with_passkey(untrusted_json: str, sign_in: SignIn[Opens]) -> Opens:
    """Sign in with a passkey alone (passkeys.signer): two factors proved, no second step."""
    user, method = passkeys.signer(untrusted_json)
    try:
        return sign_in.open(user, passkeys.PROVIDER, method)
    except EmailNotConfirmed as error:  # refused too: the challenge stays spent
        raise kept(error) from None


# The second step -----------------------------------------------------------------------------

@dataclass(frozen=True)
class CodeProof:
    """A code of the account's authenticator app, or a recovery code (used up)."""

    code: str


@dataclass(frozen=True)
class PasskeyProof:
    """A passkey's answer to the pending sign-in's own challenge (passkeys.second_step)."""

    untrusted_json: str


Proof = CodeProof | PasskeyProof


def _check(proof: Proof) -> Check:
    if isinstance(proof, CodeProof):
        return lambda user, _pending: codes.use_code(user, proof.code)
    return lambda user, row: passkeys.second_step(proof.untrusted_json, user, row)


@writes
def complete_second_step(raw: str, client: ClientInfo, proof: Proof, *,
                         replacing: AuthSession | None = None) -> Opened:
    """Complete a pending sign-in of the hosted pages with `proof` and open what it kept for,
    in one unit of work (pending.prove's refusals)."""
    proved = pending.prove(raw, Purpose.HOSTED, client, _check(proof))
    return to(proved.destination, client, replacing).open(proved.user, proved.provider,
                                                          proved.method)


@writes
def complete_api_second_step(raw: str, client: ClientInfo, proof: Proof) -> IssuedTokens:
    """Complete a pending sign-in of the API: tokens, the one destination an API sign-in's
    second step (Purpose.API) keeps."""
    proved = pending.prove(raw, Purpose.API, client, _check(proof))
    return ApiSignIn(client=client).open(proved.user, proved.provider, proved.method)
