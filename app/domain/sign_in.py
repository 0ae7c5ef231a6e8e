"""Finishing a sign-in, as values. A way in (a password, a provider, a passkey) authenticates an
account and hands it here with a `SignIn`: where it goes (sessions/destinations.py) and where an
account with a second factor must prove it. `finish` opens what the destination asks for, in the
way in's unit of work, or, when a second factor is still to be proved, a pending sign-in that
keeps the destination (factors/pending.py) until `complete_second_step` opens it. Either way
the surface gets one outcome to answer."""

from __future__ import annotations

from dataclasses import dataclass

from app.db.transactions import writes
from app.domain import new_devices
from app.domain.audit import ClientInfo
from app.domain.factors import pending, second_factors
from app.domain.factors.pending import Proof, SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.sessions import browser_sessions, handoff, sessions
from app.domain.sessions.browser_sessions import BrowserSignIn
from app.domain.sessions.destinations import Destination, ToApi, ToBrowser
from app.domain.sessions.sessions import IssuedTokens
from app.models import AuthSession, User


@dataclass(frozen=True)
class SiteCode:
    """A code for a client site (ToSite), and the way its sign-in came in."""

    code: str
    provider: str


Opened = IssuedTokens | BrowserSignIn | SiteCode
Outcome = Opened | SecondFactorRequired


@dataclass(frozen=True)
class SignIn:
    """A sign-in about to be finished: where it goes, for which client, the browser session it
    replaces (ToBrowser), and where an account with a second factor proves it (None: it need
    not, as after a passkey)."""

    destination: Destination
    client: ClientInfo
    replacing: AuthSession | None = None
    second_step: Purpose | None = Purpose.HOSTED

    def finish(self, user: User, provider: str, second_factor: str | None = None) -> Outcome:
        return finish(user, provider, self, second_factor)


@writes
def finish(user: User, provider: str, sign_in: SignIn,
           second_factor: str | None = None) -> Outcome:
    """Open what the sign-in's destination asks for, `second_factor` being the one it proved;
    or a pending sign-in, for an account with a second factor that it has yet to prove."""
    if second_factor is None and sign_in.second_step is not None \
            and second_factors.has_second_factor(user):
        return pending.begin(user, provider, sign_in.second_step, sign_in.destination)
    return _open(user, provider, sign_in, second_factor)


def _open(user: User, provider: str, sign_in: SignIn, second_factor: str | None) -> Opened:
    if new_devices.is_new(user, sign_in.client):
        new_devices.tell_owner(user, sign_in.client)
    destination = sign_in.destination
    if isinstance(destination, ToApi):
        return sessions.issue_tokens(user, provider, sign_in.client,
                                     second_factor=second_factor)
    if isinstance(destination, ToBrowser):
        return browser_sessions.open_browser_session(
            user, provider, sign_in.client, replacing=sign_in.replacing,
            hand_to=destination.hand_to, second_factor=second_factor, kept=destination.kept)
    return SiteCode(handoff.issue_code(user, provider, destination.hand_to,
                                       second_factor=second_factor), provider)


@writes
def complete_second_step(raw: str, purpose: Purpose, client: ClientInfo, proof: Proof, *,
                         replacing: AuthSession | None = None) -> Opened:
    """Complete a pending sign-in with `proof` and open what it kept for, in one unit of work
    (pending.prove's refusals)."""
    proved = pending.prove(raw, purpose, client, proof)
    return _open(proved.user, proved.provider,
                 SignIn(proved.destination, client, replacing, second_step=None), proved.method)
