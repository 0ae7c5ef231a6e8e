"""Finding accounts and what an operator may see of one: never a hash, a key, a code or a
token."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import ColumnElement, Select, func, or_, select, tuple_
from sqlalchemy import text as sql_text

from app.domain import addresses, text
from app.domain.admin.pages import Page, cursor_of, moment_of, page_size, position_of
from app.domain.errors import InvalidQuery, NotFound
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
    text: str | None = None  # in the address, the name or the id, whatever the case
    operator: bool | None = None


SHORTEST_TEXT = 3  # a trigram: what the search index of PostgreSQL can find
LONGEST_TEXT = 254  # the longest address


def _escaped(untrusted: str) -> str:
    """LIKE's wildcards (% and _) and its escape character, as themselves."""
    return untrusted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _after_every_key(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix`, in code point order (the
    byte order of UTF-8, which both databases compare the address key by); None: no bound."""
    while prefix:
        last = ord(prefix[-1]) + 1
        if last <= 0x10FFFF:
            return prefix[:-1] + chr(0xE000 if 0xD800 <= last < 0xE000 else last)
        prefix = prefix[:-1]
    return None


def _filtered(search: Search) -> Select[User]:
    for untrusted in (search.email_prefix, search.plan, search.text):
        if untrusted is not None and not text.is_printable(untrusted):
            raise InvalidQuery("Search for printable text only.")
    query = select(User)
    if search.email_prefix:
        # A range of the unique key's index, not LIKE: no collation or LIKE rule decides
        # whether a database can use the index.
        key_prefix = addresses.key(search.email_prefix) or search.email_prefix.lower()
        query = query.where(User.email_key >= key_prefix)
        above = _after_every_key(key_prefix)
        if above is not None:
            query = query.where(User.email_key < above)
    if search.text:
        query = query.where(_containing(search.text))
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


def _containing(untrusted: str) -> ColumnElement[bool]:
    """Accounts with `untrusted` in their address, name or id, whatever the case (ILIKE, which
    PostgreSQL's trigram index serves)."""
    words = untrusted.strip()
    if not SHORTEST_TEXT <= len(words) <= LONGEST_TEXT:
        raise InvalidQuery(f"Search for {SHORTEST_TEXT} to {LONGEST_TEXT} characters.",
                          [{"pointer": "#/q", "detail": f"{SHORTEST_TEXT} to {LONGEST_TEXT} "
                                                        "characters"}])
    inside = f"%{_escaped(words)}%"
    return or_(User.email.ilike(inside, escape="\\"), User.full_name.ilike(inside, escape="\\"),
               User.id.ilike(inside, escape="\\"))


def search_users(search: Search, limit: int | None = None,
                 cursor: str | None = None) -> Page[User]:
    """Accounts by creation, oldest first (then by id): a page, and the cursor of the next."""
    size = page_size(limit)
    query = _filtered(search)
    _planned_for_these_values(search)
    position = position_of(cursor, (str, str))
    if position is not None:
        after = moment_of(str(position[0]))
        # One row comparison: both databases read the index from that position on.
        query = query.where(tuple_(User.created_at, User.id) > tuple_(after, str(position[1])))
    users = list(db.session.scalars(query.order_by(User.created_at, User.id).limit(size + 1)))
    more, users = len(users) > size, users[:size]
    last = users[-1] if users else None
    return Page(users, cursor_of([last.created_at.isoformat(), last.id])
                if more and last else None)


def _planned_for_these_values(search: Search) -> None:
    """On PostgreSQL, a filtered page is planned for this search's values each time. Once
    psycopg has prepared the statement (a connection's 5th run of it), the server may keep one
    generic plan for any values, and for a search or a rare plan that plan walks every account
    in creation order instead of reading the few that match from their index. An unfiltered page
    reads that index in order whatever the values, so it asks nothing (one statement less)."""
    if search != Search() and db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(sql_text("SET LOCAL plan_cache_mode = force_custom_plan"))


ACCOUNT_ID = re.compile(r"^[0-9a-f-]{1,36}$")  # what new_id makes: only such an id is looked up


def require_user(untrusted_id: str) -> User:
    user = db.session.get(User, untrusted_id) if ACCOUNT_ID.fullmatch(untrusted_id) else None
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

