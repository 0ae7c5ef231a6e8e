"""What second factors an account has (authenticator app, recovery codes, passkeys), which second
step may use which, and the operator's reset. Wrong codes are counted whatever RATELIMIT_ENABLED
says: a six-digit code must never be open to unlimited guessing.
Why: docs/architecture/design-notes.md, "Second factors"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import ColumnElement, delete, exists, func, select

from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.factors.codes import RECOVERY_CODE, TOTP, totp_of
from app.domain.factors.errors import FactorNeedsConfirmedEmail, FactorNeedsProvedPassword
from app.domain.mail.outbox import schedule
from app.extensions import db
from app.models import MailJob, Passkey, RecoveryCode, TotpFactor, User

PASSKEY = "passkey"


class Purpose(StrEnum):
    """Where a pending sign-in's second step is answered."""

    HOSTED = "hosted"  # the hosted pages, which may also take a passkey
    API = "api"  # v2's `mfa_token`


# Reading ---------------------------------------------------------------------------------------

# session.info: user id -> (has a TOTP factor, has a passkey), read with the account by a
# sign-in (`find_with_factors`) for the rest of its request, so that a sign-in reads each table
# once. The request's session ends with the request; nothing there changes a factor.
_READ_WITH_ACCOUNT = "svc_second_factors"


def find_with_factors(where: ColumnElement[bool]) -> User | None:
    """The account `where` selects, with which second factors it has, in one statement."""
    row = db.session.execute(select(
        User,
        exists().where(TotpFactor.user_id == User.id, TotpFactor.confirmed_at.is_not(None)),
        exists().where(Passkey.user_id == User.id)).where(where)).one_or_none()
    if row is None:
        return None
    user, totp, passkey = row
    db.session.info.setdefault(_READ_WITH_ACCOUNT, {})[user.id] = (bool(totp), bool(passkey))
    return user


def _read_with_account(user: User) -> tuple[bool, bool] | None:
    found: tuple[bool, bool] | None = db.session.info.get(_READ_WITH_ACCOUNT, {}).get(user.id)
    return found


def has_totp(user: User) -> bool:
    if (known := _read_with_account(user)) is not None:
        return known[0]
    factor = totp_of(user.id)
    return factor is not None and factor.confirmed_at is not None


def has_passkey(user: User) -> bool:
    if (known := _read_with_account(user)) is not None:
        return known[1]
    return db.session.scalar(select(Passkey.id).where(Passkey.user_id == user.id).limit(1)) \
        is not None


def has_second_factor(user: User) -> bool:
    return has_totp(user) or has_passkey(user)


def methods(user: User, purpose: Purpose = Purpose.HOSTED) -> list[str]:
    """The second factors a pending sign-in of this account may complete with, for `purpose`:
    a passkey only on the hosted pages, whose origin is the one passkeys are made for."""
    found = [TOTP] if has_totp(user) else []
    if recovery_codes_left(user):
        found.append(RECOVERY_CODE)
    if purpose == Purpose.HOSTED and has_passkey(user):
        found.append(PASSKEY)
    return found


def recovery_codes_left(user: User) -> int:
    return int(db.session.scalar(select(func.count()).select_from(RecoveryCode).where(
        RecoveryCode.user_id == user.id, RecoveryCode.used_at.is_(None))) or 0)


@dataclass(frozen=True)
class Summary:
    """What the account page shows."""

    totp: bool
    passkeys: bool
    recovery_codes_left: int

    @property
    def any(self) -> bool:
        return self.totp or self.passkeys


def summary(user: User) -> Summary:
    return Summary(has_totp(user), has_passkey(user), recovery_codes_left(user))


def require_may_enrol(user: User) -> None:
    """A second factor belongs to the address's holder, and outlives a reset: none before
    someone proved the address (FactorNeedsConfirmedEmail), and none while the password may be
    someone else's, set before that proof by whoever signed up (FactorNeedsProvedPassword)."""
    if not user.email_verified:
        raise FactorNeedsConfirmedEmail()
    if not user.password_is_the_holders:
        raise FactorNeedsProvedPassword()


# Removing --------------------------------------------------------------------------------------

@writes
def reset(user: User, client: ClientInfo) -> None:
    """An operator's reset (`users reset-mfa`, the admin API, the console): every second
    factor of the account goes (audited, and the owner is told)."""
    had = summary(user)
    _remove_all(user)
    kinds = [kind for kind, held in (("totp", had.totp), ("passkey", had.passkeys),
                                     ("recovery_codes", had.recovery_codes_left)) if held]
    audit.record(AuditName.SECOND_FACTORS_RESET, client, user_id=user.id,
                 changes=audit.changed(second_factors=(kinds, [])))
    tell_owner(user, MailJob.SECOND_FACTOR_REMOVED, "every second factor")


def remove_unproved(user: User) -> None:
    """Remove the factors of an account whose address nobody had proved, in the caller's unit
    of work (a reset: domain/accounts/recovery.py)."""
    _remove_all(user)


def remove_added_since(user: User, since: datetime) -> None:
    """Remove the factors, passkeys and recovery codes added at or after `since`, in the
    caller's unit of work (an undone address change: whoever made it added them, to keep a way
    in or to shut the owner out)."""
    for model in (TotpFactor, Passkey, RecoveryCode):
        db.session.execute(delete(model).where(model.user_id == user.id,
                                               model.created_at >= since))


def _remove_all(user: User) -> None:
    db.session.execute(delete(TotpFactor).where(TotpFactor.user_id == user.id))
    db.session.execute(delete(Passkey).where(Passkey.user_id == user.id))
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))


def drop_recovery_codes_if_unprotected(user: User) -> None:
    """Recovery codes stand in for a second factor: they go with the account's last one."""
    if not has_second_factor(user):
        db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))


def tell_owner(user: User, kind: str, factor: str, name: str | None = None) -> None:
    """`factor`: "authenticator app", "passkey" (with its `name`) or "every second factor"; the
    mail says it in the account's language (domain/accounts/emails.py)."""
    schedule(kind, {"to": user.email, "factor": factor, **({"name": name} if name else {})})
