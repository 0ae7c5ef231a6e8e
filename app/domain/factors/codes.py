"""The one-time codes of the second step: an authenticator app's (TOTP, RFC 6238) and recovery
codes. Each is used up when it matches, atomically: of two requests with the same code, one wins."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

import pyotp
from sqlalchemy import delete, func, select, update

from app.db.rows import changed
from app.domain.clock import now
from app.domain.mail.outbox import schedule
from app.extensions import db
from app.models import MailJob, RecoveryCode, TotpFactor, User

STEP = 30  # seconds: the RFC's and every app's default
WINDOW = 1  # steps either side of now that a code may come from (clock drift, slow typing)
RECOVERY_CODES = 10
TOTP, RECOVERY_CODE = "totp", "recovery_code"


def totp_of(user_id: str) -> TotpFactor | None:
    return db.session.get(TotpFactor, user_id)


def _step(at: datetime) -> int:
    return int(at.timestamp()) // STEP


def matching_step(factor: TotpFactor, code: str) -> int | None:
    """The time step, within the window and after the last one used, whose code `code` is."""
    code = "".join(code.split())
    if not (len(code) == 6 and code.isascii() and code.isdigit()):
        return None
    totp, current = pyotp.TOTP(factor.secret), _step(now())
    for step in range(current - WINDOW, current + WINDOW + 1):
        if (factor.last_used_step is None or step > factor.last_used_step) and \
                hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def _use_totp(user: User, code: str) -> bool:
    factor = totp_of(user.id)
    if factor is None or factor.confirmed_at is None:
        return False
    step = matching_step(factor, code)
    if step is None:
        return False
    claimed = changed(
        update(TotpFactor).where(TotpFactor.user_id == user.id,
                                 (TotpFactor.last_used_step.is_(None))
                                 | (TotpFactor.last_used_step < step))
        .values(last_used_step=step).execution_options(synchronize_session=False))
    return claimed == 1


def _code_hash(user_id: str, code: str) -> str:
    normal = "".join(code.lower().split()).replace("-", "")
    return hashlib.sha256(f"{user_id}\0{normal}".encode("utf-8", "surrogatepass")).hexdigest()


def new_recovery_codes(user: User) -> list[str]:
    """A new set of recovery codes, in the caller's unit of work: the old set stops working."""
    changed(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(alphabet) for _ in range(10))  # ~49 bits each
        codes.append(f"{raw[:5]}-{raw[5:]}")
    at = now()
    db.session.add_all(RecoveryCode(user_id=user.id, code_hash=_code_hash(user.id, code),
                                    created_at=at) for code in codes)
    db.session.flush()
    return codes


def _use_recovery_code(user: User, code: str) -> bool:
    used = changed(
        update(RecoveryCode).where(RecoveryCode.user_id == user.id,
                                   RecoveryCode.code_hash == _code_hash(user.id, code),
                                   RecoveryCode.used_at.is_(None))
        .values(used_at=now()).execution_options(synchronize_session=False))
    if used != 1:
        return False
    left = db.session.scalar(select(func.count()).select_from(RecoveryCode).where(
        RecoveryCode.user_id == user.id, RecoveryCode.used_at.is_(None))) or 0
    # The owner hears of every use: a recovery code used by someone else is a taken account.
    schedule(MailJob.RECOVERY_CODE_USED, {"to": user.email, "left": int(left)})
    return True


def use_code(user: User, code: str) -> str | None:
    """The method a code proved (and used up), or None."""
    digits = "".join(code.split())
    if digits.isascii() and digits.isdigit():
        return TOTP if _use_totp(user, digits) else None
    return RECOVERY_CODE if _use_recovery_code(user, code) else None
