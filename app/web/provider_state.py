"""Pending provider sign-ins, bound to the browser that started them.

Each lives in the signed, HttpOnly session cookie under the `state` we sent to the provider
(authlib's, about 178 random bits), and is taken out on first use: a callback with a missing,
altered, foreign or replayed state finds nothing, so no one can finish a sign-in in a browser
that did not start it (login CSRF).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Literal

from flask import session

from app.domain.accounts.errors import InvalidState
from app.domain.accounts.providers import Profile
from app.web.targets import Target

_KEY = "svc_oauth"
MAX_PENDING = 5
MAX_AGE = 600  # seconds a person may spend at the provider

# api: hand a code straight to the client site; hosted: also sign this browser in to the
# service (single sign-on); link: add the identity to the account signed in in this browser.
Mode = Literal["api", "hosted", "link"]


@dataclass(frozen=True)
class ProviderRound:
    """A provider sign-in under way in this browser: how it started and how to finish it (the
    pending sign-in of a second factor is another thing: app/models, PendingSignIn)."""

    provider: str
    mode: Mode
    redirect_uri: str | None
    client_state: str | None
    code_challenge: str | None
    code_verifier: str
    nonce: str | None
    started_at: float
    user_id: str | None = None  # link mode: who asked

    @property
    def target(self) -> Target | None:
        if self.redirect_uri is None:
            return None
        return Target(self.redirect_uri, self.client_state, self.code_challenge)


def save(state: str, pending: ProviderRound) -> None:
    store = dict(session.get(_KEY, {}))
    store[state] = asdict(pending)
    newest = sorted(store.items(), key=lambda item: item[1]["started_at"])[-MAX_PENDING:]
    session[_KEY] = dict(newest)


def take(untrusted_state: str | None) -> ProviderRound:
    store = dict(session.get(_KEY, {}))
    found = store.pop(untrusted_state or "", None)
    session[_KEY] = store
    if not isinstance(found, dict):
        raise InvalidState()
    try:
        pending = ProviderRound(**found)
    except TypeError:  # a cookie from an older version of this service
        raise InvalidState() from None
    if time.time() - pending.started_at > MAX_AGE:
        raise InvalidState()
    return pending


# Sign-ins waiting for the person to prove an existing account (AccountNeedsProof) -------------

_LINK_KEY = "svc_link"


@dataclass(frozen=True)
class PendingLink:
    """A provider sign-in that found an account it may not link unasked: what the provider
    said, which account, and how the sign-in was to finish. One per browser, for MAX_AGE."""

    mode: Mode
    redirect_uri: str | None
    client_state: str | None
    code_challenge: str | None
    user_id: str
    provider: str
    subject: str
    email: str
    name: str
    started_at: float

    @property
    def target(self) -> Target | None:
        if self.redirect_uri is None:
            return None
        return Target(self.redirect_uri, self.client_state, self.code_challenge)

    @property
    def profile(self) -> Profile:
        return Profile(self.provider, self.subject, self.email, True, self.name)


def save_link(pending: ProviderRound, profile: Profile, user_id: str) -> None:
    assert profile.email is not None  # AccountNeedsProof comes from a verified address only
    session[_LINK_KEY] = asdict(PendingLink(
        mode=pending.mode, redirect_uri=pending.redirect_uri, client_state=pending.client_state,
        code_challenge=pending.code_challenge, user_id=user_id, provider=profile.provider,
        subject=profile.subject, email=profile.email, name=profile.name,
        started_at=time.time()))


def peek_link() -> PendingLink:
    """The browser's pending link; InvalidState when there is none, or it is too old."""
    found = session.get(_LINK_KEY)
    try:
        pending = PendingLink(**found) if isinstance(found, dict) else None
    except TypeError:  # a cookie from an older version of this service
        pending = None
    if pending is None or time.time() - pending.started_at > MAX_AGE:
        raise InvalidState()
    return pending


def drop_link() -> None:
    session.pop(_LINK_KEY, None)
