"""What "this session is live" means, the one definition: neither revoked nor expired, and its
account not disabled. In SQL, with the session's account (User) joined; in Python, on a loaded
session. And the statement that asks it of a bearer call's session (infra/live_sessions.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BindParameter, ColumnElement, bindparam, func, literal_column, select

from app.models import AuthSession, Identity, SiteRegistryMark, User


def live_conditions(at: datetime | BindParameter[datetime]) -> tuple[ColumnElement[bool], ...]:
    """The conditions of a live session, for a statement that joins the session's User."""
    return (AuthSession.revoked_at.is_(None), AuthSession.expires_at > at,
            User.disabled_at.is_(None))


def is_live(session: AuthSession, at: datetime) -> bool:
    """The same conditions, on a loaded session."""
    return (session.revoked_at is None and session.expires_at > at
            and session.user.disabled_at is None)


LIVE_ACCOUNT = (
    select(User.id, User.email, User.full_name, User.plan, User.email_verified,
           AuthSession.expires_at,
           # A literal separator: a bound one would be rendered per execution.
           select(func.aggregate_strings(
               Identity.provider, literal_column("','")))  # type: ignore[arg-type]  # typed str
           .where(Identity.user_id == User.id).scalar_subquery(),
           # The sites' mark, for the CORS hook of a call from a browser: no statement of its own.
           func.coalesce(select(SiteRegistryMark.mark)
                         .where(SiteRegistryMark.id == literal_column("1")).scalar_subquery(),
                         literal_column("''")))
    .join(User, User.id == AuthSession.user_id)
    # The session by its key alone; its account is compared after (LiveSessions._query). With
    # `sessions.user_id = $2` too, PostgreSQL's generic plan of this prepared statement may
    # read the account's sessions by ix_sessions_user_id, every one of them, instead.
    .where(AuthSession.id == bindparam("session_id"),
           *live_conditions(bindparam("at", type_=AuthSession.expires_at.type)))
)
