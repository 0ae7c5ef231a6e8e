"""The pending sign-in: what a sign-in of an account with a second factor opens instead of a
session, once its first factor (a password, a provider) is authenticated. A short-lived,
single-use token for one purpose (factors/second_factors.py, Purpose), stored as its hash with
where the sign-in goes (sessions/destinations.py), until a proof of the second factor
completes it (domain/sign_in.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from app.db.batches import delete_batched
from app.db.rows import claim_once
from app.db.transactions import kept, writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.factors.errors import InvalidMfaToken, InvalidSecondFactor
from app.domain.factors.second_factors import Purpose, methods
from app.domain.limits import throttle
from app.domain.sessions import destinations, sessions
from app.domain.sessions.destinations import Destination
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import PendingSignIn, User

# Checks the proof of a second factor for a pending sign-in (and uses it up): the method it
# proved, or None. The proofs are domain/sign_in.py's (a code, a passkey's answer).
Check = Callable[[User, PendingSignIn], str | None]


@dataclass(frozen=True)
class SecondFactorRequired:
    """What a sign-in of an account with a second factor opens instead of a session."""

    token: str
    methods: list[str]
    expires_in: int


def _ttl() -> int:
    return settings().mfa_pending_ttl


@writes
def begin(user: User, provider: str, purpose: Purpose,
          destination: Destination) -> SecondFactorRequired:
    """A pending sign-in of `user`, whose first factor (`provider`) was just authenticated."""
    sessions.require_confirmed(user)
    raw, at = tokens.new_secret(), now()
    db.session.add(PendingSignIn(token_hash=tokens.hash_secret(raw), user_id=user.id,
                                 purpose=purpose, provider=provider, created_at=at,
                                 expires_at=at + timedelta(seconds=_ttl()),
                                 **destinations.columns(destination)))
    return SecondFactorRequired(raw, methods(user, purpose), _ttl())


def live_pending(raw: str, purpose: Purpose) -> PendingSignIn:
    pending = db.session.get(PendingSignIn, tokens.hash_secret(raw)) if raw else None
    if pending is None or pending.purpose != purpose or pending.used_at is not None \
            or pending.expires_at <= now() or destinations.of(pending) is None:
        raise InvalidMfaToken()
    return pending


def pending_user(raw: str, purpose: Purpose) -> User:
    """The account a live pending sign-in is for (to name it on the second step's page)."""
    return db.session.get_one(User, live_pending(raw, purpose).user_id)


def destination(raw: str, purpose: Purpose) -> Destination:
    """Where a live pending sign-in goes once it is completed."""
    found = destinations.of(live_pending(raw, purpose))
    assert found is not None  # live_pending refuses a row without one
    return found


@dataclass(frozen=True)
class Proved:
    """A pending sign-in completed: its account, first factor, second factor and destination."""

    user: User
    provider: str
    method: str
    destination: Destination


def prove(raw: str, purpose: Purpose, client: ClientInfo, check: Check) -> Proved:
    """Complete a pending sign-in whose proof `check` holds, in the caller's unit of work.
    InvalidMfaToken for a token that is unknown, used, expired or of another purpose;
    InvalidSecondFactor (kept) for a wrong proof (counted, and the pending sign-in ends after
    MFA_PENDING_ATTEMPTS of them); RateLimited after too many."""
    pending = live_pending(raw, purpose)
    user = db.session.get_one(User, pending.user_id)
    attempt = throttle.second_factor_attempt(user.id, pending.token_hash)
    attempts = settings().mfa_pending_attempts
    if attempt.pending_attempts > attempts:
        raise InvalidMfaToken()  # spent by the wrong codes of concurrent attempts
    method = check(user, pending) if user.disabled_at is None else None
    if method is None:
        if attempt.pending_attempts == attempts:
            pending.used_at = now()  # this pending sign-in is spent: start again
        audit.record(AuditName.SECOND_FACTOR_FAILED, client, user_id=user.id)
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)
    # Claimed atomically: of two requests completing one pending sign-in, one wins.
    if not claim_once(PendingSignIn, PendingSignIn.token_hash == pending.token_hash,
                      PendingSignIn.used_at, used_at=now()):
        raise InvalidMfaToken()
    audit.record(AuditName.SECOND_FACTOR_VERIFIED, client, user_id=user.id)
    found = destinations.of(pending)
    assert found is not None
    return Proved(user, pending.provider, method, found)


def purge_expired() -> int:
    return delete_batched(PendingSignIn.token_hash,
                          PendingSignIn.expires_at < now() - timedelta(days=1))
