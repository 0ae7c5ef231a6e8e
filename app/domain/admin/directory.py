"""Finding accounts and what an operator may see of one: never a hash, a key, a code or a
token."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Select, and_, func, or_, select

from app.domain import addresses, text
from app.domain.admin.pages import Page, cursor_of, page_size, position_of
from app.domain.errors import InvalidBody, NotFound
from app.domain.factors import second_factors
from app.domain.sessions import sessions
from app.extensions import db
from app.models import AuthSession, Identity, Passkey, User


class Status(StrEnum):
    """One name for an account's state on every surface (admin API, console, CLI)."""

    ACTIVE = "active"
    DISABLED = "disabled"
    # Its owner or an operator deleted it: disabled, and erased once the grace period ends
    # unless the owner's mailed link restores it.
    DELETION_SCHEDULED = "deletion_scheduled"


def status_of(user: User) -> Status:
    if user.deletion_scheduled_at is not None:
        return Status.DELETION_SCHEDULED
    return Status.DISABLED if user.disabled_at is not None else Status.ACTIVE


@dataclass(frozen=True)
class Search:
    email_prefix: str | None = None
    plan: str | None = None
    status: Status | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    text: str | None = None  # in the address or the name, whatever the case
    operator: bool | None = None


def _escaped(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _filtered(search: Search) -> Select[User]:
    for untrusted in (search.email_prefix, search.plan, search.text):
        if untrusted is not None and not text.is_printable(untrusted):
            raise InvalidBody("Search for printable text only.")
    query = select(User)
    if search.email_prefix:
        key_prefix = addresses.key(search.email_prefix) or search.email_prefix.lower()
        query = query.where(User.email_key.like(_escaped(key_prefix) + "%", escape="\\"))
    if search.text:
        inside = f"%{_escaped(search.text.lower())}%"
        query = query.where(or_(User.email_key.like(inside, escape="\\"),
                                func.lower(User.full_name).like(inside, escape="\\")))
    if search.operator is not None:
        query = query.where(User.operator == search.operator)
    if search.plan:
        query = query.where(User.plan == search.plan)
    if search.status is Status.ACTIVE:
        query = query.where(User.disabled_at.is_(None), User.deletion_scheduled_at.is_(None))
    elif search.status is Status.DISABLED:
        query = query.where(User.disabled_at.is_not(None), User.deletion_scheduled_at.is_(None))
    elif search.status is Status.DELETION_SCHEDULED:
        query = query.where(User.deletion_scheduled_at.is_not(None))
    if search.created_after:
        query = query.where(User.created_at >= search.created_after)
    if search.created_before:
        query = query.where(User.created_at < search.created_before)
    return query


def search_users(search: Search, limit: int | None = None,
                 cursor: str | None = None) -> Page[User]:
    """Accounts by creation, oldest first (then by id): a page, and the cursor of the next."""
    size = page_size(limit)
    query = _filtered(search)
    position = position_of(cursor, (str, str))
    if position is not None:
        after = _created_at(str(position[0]))
        query = query.where(or_(User.created_at > after,
                                and_(User.created_at == after, User.id > position[1])))
    users = list(db.session.scalars(query.order_by(User.created_at, User.id).limit(size + 1)))
    more, users = len(users) > size, users[:size]
    last = users[-1] if users else None
    return Page(users, cursor_of([last.created_at.isoformat(), last.id])
                if more and last else None)


def _created_at(untrusted: str) -> datetime:
    try:
        at = datetime.fromisoformat(untrusted)
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise InvalidBody("The cursor is not one this service gave.",
                          [{"pointer": "#/cursor", "detail": "not a cursor of ours"}])
    return at


ACCOUNT_ID = re.compile(r"^[0-9a-f-]{1,36}$")  # what new_id makes: only such an id is looked up


def require_user(untrusted_id: str) -> User:
    user = db.session.get(User, untrusted_id) if ACCOUNT_ID.match(untrusted_id) else None
    if user is None:
        raise NotFound("No account has this id.")
    return user


def require_by_email(untrusted_email: str) -> User:
    """NotFound for text with a control character too: a NUL reaches no query (PostgreSQL
    cannot compare one), and no escape sequence goes back to the operator's terminal."""
    user = db.session.scalars(
        select(User).where(User.email_key == addresses.key(untrusted_email))).one_or_none() \
        if text.is_printable(untrusted_email) else None
    if user is None:
        raise NotFound(f"No account for {text.cleaned(untrusted_email, 320)}.")
    return user


@dataclass(frozen=True)
class Profile:
    """An account as an operator sees it."""

    user: User
    status: Status
    providers: list[str]
    second_factors: dict[str, int]  # kind: how many (totp, passkey, recovery codes left)
    passkeys: int
    open_sessions: int
    last_sign_in: datetime | None


def profile(user: User) -> Profile:
    providers = sorted(db.session.scalars(
        select(Identity.provider).where(Identity.user_id == user.id)))
    passkeys = db.session.scalar(
        select(func.count()).select_from(Passkey).where(Passkey.user_id == user.id)) or 0
    live = len(sessions.live_sessions(user.id))
    last = db.session.scalar(
        select(func.max(AuthSession.created_at)).where(AuthSession.user_id == user.id))
    summary = second_factors.summary(user)
    factors = {"totp": int(summary.totp), "passkey": passkeys,
               "recovery_codes_left": summary.recovery_codes_left}
    return Profile(user, status_of(user), providers, factors, passkeys, live, last)

