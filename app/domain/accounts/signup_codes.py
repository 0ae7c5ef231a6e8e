"""The code that proves an address before a passkey-first account takes it (a minimal step of
this feature's own, apart from the email sign-in codes of existing accounts): six digits mailed
to the address, stored as a hash, one live code per address, minutes-long, used once, dead after
MAX_FAILURES wrong tries (counted atomically, so parallel guesses share them).
Why: docs/decisions.md, "Passkey-first accounts"."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from flask import current_app
from sqlalchemy import delete, update

from app.db.rows import changed
from app.db.transactions import kept, writes
from app.domain.clock import now
from app.domain.errors import AuthError
from app.domain.text import N_
from app.extensions import db
from app.models import SignupCode

TTL = timedelta(minutes=10)
MAX_FAILURES = 5
DIGITS = 6


class InvalidCode(AuthError):
    status = 401
    code = "invalid_code"
    detail = N_("That code is not right, or no longer works. Ask for a new one.")


def _hash(email_key: str, code: str) -> str:
    key = str(current_app.config["SECRET_KEY"]).encode()
    return hmac.new(key, f"signup-code\0{email_key}\0{code}".encode(), hashlib.sha256).hexdigest()


def issue(email_key: str) -> str:
    """A new code for the address, in the caller's unit of work (the mail job's): the one before
    stops working. The code itself is only in the mail."""
    code = f"{secrets.randbelow(10 ** DIGITS):0{DIGITS}d}"
    at = now()
    db.session.execute(delete(SignupCode).where(SignupCode.email_key == email_key))
    db.session.add(SignupCode(email_key=email_key, code_hash=_hash(email_key, code),
                              created_at=at, expires_at=at + TTL, failures=0))
    db.session.flush()
    return code


@writes
def redeem(email_key: str, untrusted_code: str) -> None:
    """Use the address's live code, in the caller's unit of work: of two requests with it, one
    wins. InvalidCode otherwise; a wrong try is counted (kept), and the code dies at the last."""
    code = "".join(untrusted_code.split())
    live = (SignupCode.email_key == email_key, SignupCode.expires_at > now(),
            SignupCode.failures < MAX_FAILURES)
    if len(code) == DIGITS and code.isascii() and code.isdigit() and changed(
            delete(SignupCode).where(*live, SignupCode.code_hash == _hash(email_key, code))) == 1:
        return
    changed(update(SignupCode).where(*live).values(failures=SignupCode.failures + 1)
            .execution_options(synchronize_session=False))
    raise kept(InvalidCode())


def purge_expired() -> int:
    return changed(delete(SignupCode).where(SignupCode.expires_at < now()))
