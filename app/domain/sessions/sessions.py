"""Sessions: opening one for a device, issuing and rotating its tokens (with reuse detection),
checking bearers, ending sessions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm.attributes import set_committed_value

from app.db.batches import delete_batched
from app.db.rows import changed, claim_once, insert_loaded, insert_values
from app.db.transactions import kept, until_commit, writes
from app.domain import audit, events
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients import sites
from app.domain.clock import now
from app.domain.device_names import device_of
from app.domain.events import EventType
from app.domain.services import services
from app.domain.sessions.errors import EmailNotConfirmed, InvalidRefreshToken
from app.domain.tokens import tokens
from app.domain.tokens.errors import SessionRevoked
from app.extensions import db
from app.infra.live_sessions import Account
from app.infra.live_sql import is_live, live_conditions
from app.infra.settings import settings
from app.models import AuthSession, PendingSignIn, RefreshToken, User
from app.models.types import new_id


@dataclass(frozen=True)
class IssuedTokens:
    user: User
    session: AuthSession
    access_token: str
    refresh_token: str
    expires_in: int


@dataclass(frozen=True)
class ForClient:
    """A session opened for an OpenID Connect client: its client id, the scope granted, and
    the browser session (single sign-on) it came through."""

    client_id: str
    scope: str
    browser_session_id: str | None


# RFC 8176 names of how a session signed in: a password, a one-time code, a passkey held by
# hardware (device-bound) or by software (synced); any other first factor is a provider ("fed").
_AMR = {"password": "pwd", "totp": "otp", "recovery_code": "otp", "passkey": "hwk",
        "synced_passkey": "swk", "email_code": "otp"}
_AMR_ALWAYS = frozenset({"email_code"})  # said alone too (a token without amr is a password's)


def amr(provider: str, second_factor: str | None) -> list[str]:
    if provider == "passkey":  # a passkey alone: the key and the person's PIN or fingerprint
        return [_AMR.get(second_factor or "passkey", "hwk"), "mfa"]
    first = [_AMR.get(provider, "fed")]
    if not second_factor:
        return first
    second = _AMR.get(second_factor, "mfa")  # an email code then a TOTP: ["otp", "mfa"]
    return first + ([second] if second not in first else []) + ["mfa"]


# The authenticator assurance levels (NIST SP 800-63B) a session's `acr` may be: the discovery
# document's acr_values_supported.
ASSURANCE_LEVELS = ("aal1", "aal2")


def assurance(second_factor: str | None) -> str:
    """The authenticator assurance level as `acr`: aal2 with a second factor."""
    return ASSURANCE_LEVELS[1] if second_factor else ASSURANCE_LEVELS[0]


class LogoutScope(StrEnum):
    LOCAL = "local"    # this session
    OTHERS = "others"  # every other session of the account
    GLOBAL = "global"  # every session of the account


def _seconds(seconds: int) -> timedelta:
    return timedelta(seconds=seconds)


# Opening a session ---------------------------------------------------------------------------

def may_open_session(user: User) -> bool:
    """Whether this account may hold a session at all: with SVC_REQUIRE_EMAIL_CONFIRMATION, not
    before its address is confirmed, whatever the way in."""
    return user.email_verified or not settings().require_email_confirmation


def require_confirmed(user: User) -> None:
    """EmailNotConfirmed unless the account may hold a session. Every way in ends here: a new
    session, a handoff code, and every refresh (of sessions opened before the setting, too)."""
    if not may_open_session(user):
        raise EmailNotConfirmed()


@writes
def issue_tokens(user: User, provider: str, client: ClientInfo,
                 for_client: ForClient | None = None, *,
                 second_factor: str | None = None) -> IssuedTokens:
    """Open a session for an API client (or an OpenID Connect client) whose credential was just
    authenticated, and issue its first tokens."""
    session = open_session(user, provider, client, for_client, second_factor=second_factor)
    refresh = _new_refresh_token(session, session.created_at)
    return _issue(user, session, refresh)


@writes
def open_session(user: User, provider: str, client: ClientInfo,
                 for_client: ForClient | None = None, *,
                 second_factor: str | None = None,
                 lasting: timedelta | None = None) -> AuthSession:
    """A session for a device, without tokens (a browser's session is so), written with its
    audit event. EmailNotConfirmed when the account may not hold one yet. `second_factor`: the
    one its sign-in proved, if any; `lasting`: how long it may live if not REFRESH_MAX_TTL."""
    require_confirmed(user)
    at = now()
    session = insert_loaded(AuthSession, {
        "id": new_id(), "user_id": user.id, "provider": provider, "created_at": at,
        "last_used_at": at, "expires_at": at + (lasting or _seconds(settings().refresh_max_ttl)),
        "revoked_at": None,
        "revoke_reason": None, "ip": client.ip, "user_agent": client.user_agent,
        "client_id": for_client.client_id if for_client else None,
        "scope": for_client.scope if for_client else None,
        "browser_session_id": for_client.browser_session_id if for_client else None,
        "second_factor": second_factor, "site": None, "device": device_of(client),
    }, user=user)
    audit.record(AuditName.LOGIN_SUCCEEDED, client, user_id=user.id, session_id=session.id)
    return session


def live_session(session_id: str) -> AuthSession | None:
    session = db.session.get(AuthSession, session_id)
    return session if session is not None and is_live(session, now()) else None


def own_live_session(session_id: str, user_id: str) -> AuthSession | None:
    """`user_id`'s live session `session_id`: another's is None, as one that ended is."""
    session = live_session(session_id)
    return session if session is not None and session.user_id == user_id else None


def live_sessions(user_id: str) -> list[AuthSession]:
    found = db.session.scalars(
        select(AuthSession).join(User, User.id == AuthSession.user_id)
        .where(AuthSession.user_id == user_id, *live_conditions(now()))
        .order_by(AuthSession.last_used_at.desc()))
    return list(found)


def _new_refresh_token(session: AuthSession, at: datetime) -> str:
    """Write a new refresh token of `session`; only its hash is stored."""
    raw = tokens.new_secret()
    insert_values(RefreshToken, session_id=session.id, token_hash=tokens.hash_secret(raw),
                  created_at=at,
                  expires_at=min(at + _seconds(settings().refresh_idle_ttl), session.expires_at))
    return raw


def audience_of(session: AuthSession) -> str:
    """Whom a session's access tokens are for: a third-party client's (or a client's no longer
    registered) are for that client alone, so that neither the family API nor a family site
    takes them; the family's own sites' share one audience."""
    if session.client_id is None:
        return settings().jwt_audience
    site = sites.registered_site(session.client_id)
    return settings().jwt_audience if site and site.first_party else session.client_id


def _issue(user: User, session: AuthSession, refresh_token: str) -> IssuedTokens:
    # A client's session says whose it is, and what it may ask, in its tokens.
    extra: dict[str, Any] | None = (
        {"client_id": session.client_id, "scope": session.scope or ""}
        if session.client_id is not None else None)
    if session.second_factor or session.provider in _AMR_ALWAYS:  # else the minimal claims
        extra = {**(extra or {}), "amr": amr(session.provider, session.second_factor),
                 "acr": assurance(session.second_factor)}
    access = services().access_tokens.issue(user_id=user.id, session_id=session.id,
                                         plan=user.plan, now=now(), extra=extra,
                                         audience=audience_of(session))
    return IssuedTokens(user, session, access.token, refresh_token,
                        services().access_tokens.ttl)


# Refreshing ----------------------------------------------------------------------------------

@writes
def refresh(raw: str, client: ClientInfo, *, client_id: str | None = None) -> IssuedTokens:
    """Trade a refresh token for a new pair; every use rotates it. A rotated token presented again
    gets the same successor within the grace window, then revokes its session. A token works only
    where it was issued: an OpenID Connect client's at its token endpoint, any other at the API's.
    Why: docs/architecture/design-notes.md, "Live sessions and revocation"."""
    for _attempt in range(2):
        row = _find_refresh_token(raw)
        if row.session.client_id != client_id:
            raise InvalidRefreshToken()
        require_confirmed(row.session.user)
        at = now()
        if row.rotated_at is not None:
            return _answer_rotated(row, raw, at, client)
        if row.expires_at <= at:
            raise InvalidRefreshToken()
        rotated = _rotate(row, raw, at, client)
        if rotated is not None:
            return rotated
        db.session.expire_all()  # another request rotated it first: read again what it did
    raise InvalidRefreshToken()


def _answer_rotated(row: RefreshToken, raw: str, at: datetime, client: ClientInfo) -> IssuedTokens:
    session = row.session
    rotated_at = row.rotated_at
    assert rotated_at is not None
    if at - rotated_at <= _seconds(settings().refresh_reuse_grace) and row.successor_sealed:
        successor = tokens.unseal(raw, row.successor_sealed, purpose="successor")
        return _issue(session.user, session, successor)
    revoke(session, "refresh_token_reused", at)
    audit.record(AuditName.REFRESH_TOKEN_REUSED, client, user_id=session.user_id,
                 session_id=session.id)
    raise kept(InvalidRefreshToken())


def _find_refresh_token(raw: str) -> RefreshToken:
    row = db.session.scalars(
        select(RefreshToken).where(RefreshToken.token_hash == tokens.hash_secret(raw))
    ).one_or_none()
    if row is None or not is_live(row.session, now()):
        raise InvalidRefreshToken()
    return row


def _rotate(row: RefreshToken, raw: str, at: datetime, client: ClientInfo) -> IssuedTokens | None:
    """Mark `row` used and create its successor, or None when another request got there first.
    InvalidRefreshToken when the session ended since it was read."""
    session = row.session
    with db.session.begin_nested() as attempt:  # a lost race undoes this, not a joined caller's
        if not _touch_if_live(session, at, client):
            raise InvalidRefreshToken()
        successor = _new_refresh_token(session, at)
        sealed = tokens.seal(raw, successor, purpose="successor")
        if not claim_once(RefreshToken, RefreshToken.id == row.id, RefreshToken.rotated_at,
                          rotated_at=at, successor_sealed=sealed):
            attempt.rollback()
            return None
    audit.record(AuditName.TOKEN_REFRESHED, client, user_id=session.user_id, session_id=session.id)
    return _issue(session.user, session, successor)


def _touch_if_live(session: AuthSession, at: datetime, client: ClientInfo) -> bool:
    """Record a use of the session, only if the database still has it live; False if not.

    The session was read before this write: a logout may have committed since, and tokens
    issued now would be dead on arrival. The conditional UPDATE reads the row again under its
    write lock (PostgreSQL waits for a logout in progress and checks the row it committed;
    SQLite's IMMEDIATE transaction already holds out every other writer), and a logout that
    comes after it waits for this rotation and then ends its tokens too.
    """
    values = {"last_used_at": at, "ip": client.ip or session.ip,
              "user_agent": client.user_agent or session.user_agent}
    touched = changed(
        update(AuthSession)
        .where(AuthSession.id == session.id, AuthSession.user_id == User.id,
               *live_conditions(at))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if touched != 1:
        return False
    for name, value in values.items():  # what the row now holds, without a second write
        set_committed_value(session, name, value)
    return True


# Checking and ending sessions ----------------------------------------------------------------

@dataclass(frozen=True)
class Bearer:
    """Who is calling with an access token: their live session and account."""

    session_id: str
    expires_at: int
    account: Account


def authenticate_bearer(token: str, *, clients_own: bool = False) -> Bearer:
    """The live session behind a family access token (or, with `clients_own`, one a third-party
    client holds for itself: domain/tokens/tokens.py); raises a BearerError.

    The token's signature is checked once and its claims cached (tokens/tokens.py); whether the
    session still lives is asked every time (infra/live_sessions.py).
    """
    at = now()
    claims = services().access_tokens.verify(token, at, clients_own=clients_own)
    account = services().live_sessions.live_account(claims.session_id, claims.user_id, at)
    if account is None:
        raise SessionRevoked()
    return Bearer(claims.session_id, claims.expires_at, account)


_REVOKED = "svc_revoked_sessions"  # the ids revoked in the open transaction
_LOGGED_OUT = "svc_logged_out_sessions"  # those of them a logout asked for


def note_revoked(session_ids: Iterable[str], *, confirm: bool = False) -> None:
    """Remember revocations of the open transaction, to publish to every instance when (and if)
    it commits. `confirm` (a logout): if Redis does not take them, the unit of work raises
    RevocationUnpublished after its commit, so the logout does not answer success while other
    instances may still accept the sessions (infra/live_sessions.py)."""
    live = services().live_sessions
    if confirm:
        until_commit(_LOGGED_OUT, set, partial(live.publish_revoked, confirm=True)
                     ).update(session_ids)
    else:
        until_commit(_REVOKED, set, live.publish_revoked).update(session_ids)


_CHANGED = "svc_changed_accounts"  # the accounts changed in the open transaction


def note_account_changed(user_id: str) -> None:
    """An account's plan, name or address changes in the open transaction: once it commits,
    every instance reads the account again on its next bearer call."""
    live = services().live_sessions
    until_commit(_CHANGED, set, live.publish_account_changed).add(user_id)


def revoke(session: AuthSession, reason: str, at: datetime | None = None, *,
           confirm: bool = False) -> None:
    """Revoke a loaded session, in the caller's unit of work (`confirm`: see note_revoked)."""
    if session.revoked_at is None:
        session.revoked_at, session.revoke_reason = at or now(), reason
        note_revoked([session.id], confirm=confirm)
        events.emit(EventType.SESSIONS_ENDED, session.user_id,
                    {"reason": reason, "session_ids": [session.id]})


def revoke_all(user_id: str, reason: str, *, except_session: str | None = None,
               only_session: str | None = None, confirm: bool = False) -> int:
    """Revoke every live session of a user (but one, or only one, if named), in the caller's
    unit of work (`confirm`: see note_revoked). Revoking more than one session also ends the
    sign-ins waiting for a second factor: a reset, a password change or "sign out everywhere"
    leaves none to complete."""
    statement = (
        update(AuthSession)
        .where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
        .values(revoked_at=now(), revoke_reason=reason)
        .returning(AuthSession.id)
    )
    if except_session is not None:
        statement = statement.where(AuthSession.id != except_session)
    if only_session is not None:
        statement = statement.where(AuthSession.id == only_session)
    revoked = list(db.session.scalars(statement))
    note_revoked(revoked, confirm=confirm)
    if revoked:
        events.emit(EventType.SESSIONS_ENDED, user_id,
                    {"reason": reason, "session_ids": revoked})
    if only_session is None:
        changed(
            update(PendingSignIn)
            .where(PendingSignIn.user_id == user_id, PendingSignIn.used_at.is_(None))
            .values(used_at=now()).execution_options(synchronize_session=False))
    return len(revoked)


@writes
def log_out(session_id: str, user_id: str, scope: LogoutScope, client: ClientInfo, *,
            confirm: bool = True) -> None:
    """End this session (local), every other one (others) or all of the user's (global).
    A logout answers success only once every instance will refuse them (note_revoked)."""
    if scope is LogoutScope.LOCAL:
        revoke_all(user_id, "logout", only_session=session_id, confirm=confirm)
    else:
        revoke_all(user_id, "logout", confirm=confirm,
                   except_session=session_id if scope is LogoutScope.OTHERS else None)
    audit.record(AuditName.logout(scope.value), client, user_id=user_id, session_id=session_id)


def purge_expired() -> int:
    """Delete sessions that ended (expired or revoked) more than a day ago."""
    cutoff = now() - timedelta(days=1)
    return delete_batched(AuthSession.id,
                          (AuthSession.expires_at < cutoff) | (AuthSession.revoked_at < cutoff),
                          first=_delete_refresh_tokens)


def _delete_refresh_tokens(session_ids: list[str]) -> None:
    changed(delete(RefreshToken).where(RefreshToken.session_id.in_(session_ids))
            .execution_options(synchronize_session=False))
