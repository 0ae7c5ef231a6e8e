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

from app.domain.errors import InvalidState
from app.targets import Target

_KEY = "svc_oauth"
MAX_PENDING = 5
MAX_AGE = 600  # seconds a person may spend at the provider

# api: hand a code straight to the client site; hosted: also sign this browser in to the
# service (single sign-on); link: add the identity to the account signed in in this browser.
Mode = Literal["api", "hosted", "link"]


@dataclass(frozen=True)
class PendingSignIn:
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


def save(state: str, pending: PendingSignIn) -> None:
    store = dict(session.get(_KEY, {}))
    store[state] = asdict(pending)
    newest = sorted(store.items(), key=lambda item: item[1]["started_at"])[-MAX_PENDING:]
    session[_KEY] = dict(newest)


def take(untrusted_state: str | None) -> PendingSignIn:
    store = dict(session.get(_KEY, {}))
    found = store.pop(untrusted_state or "", None)
    session[_KEY] = store
    if not isinstance(found, dict):
        raise InvalidState()
    try:
        pending = PendingSignIn(**found)
    except TypeError:  # a cookie from an older version of this service
        raise InvalidState() from None
    if time.time() - pending.started_at > MAX_AGE:
        raise InvalidState()
    return pending
