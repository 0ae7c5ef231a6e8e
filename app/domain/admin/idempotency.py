"""Idempotency-Key on the admin API's writes: a retry with the same key and request gets the
first answer back instead of acting twice (billing webhooks are retried by their senders). The
answer is kept in the unit of work of the change, so a change and its kept answer commit
together or not at all; a key kept for another request is a conflict. Every write of the admin
API takes one (app/api/admin.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete, select, update

from app.db.rows import add_unless_taken, changed
from app.db.transactions import writes
from app.domain.clock import now
from app.domain.errors import AuthError
from app.extensions import db
from app.models import IdempotentAnswer

KEEP_FOR = timedelta(days=1)
MAX_KEY = 255


class IdempotencyKeyReused(AuthError):
    status = 422
    code = "idempotency_key_reused"
    detail = "This Idempotency-Key was used with another request."


class IdempotencyKeyInUse(AuthError):
    status = 409
    code = "idempotency_key_in_use"
    detail = "A request with this Idempotency-Key is being processed: retry shortly."


class InvalidIdempotencyKey(AuthError):
    status = 400
    code = "invalid_idempotency_key"
    detail = f"An Idempotency-Key is 1 to {MAX_KEY} printable ASCII characters."


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any] | None


def request_hash(method: str, path: str, body: bytes) -> str:
    return hashlib.sha256(b"\0".join((method.encode(), path.encode(), body))).hexdigest()


def check_key(untrusted_key: str) -> str:
    if not 1 <= len(untrusted_key) <= MAX_KEY or not untrusted_key.isascii() \
            or not untrusted_key.isprintable():
        raise InvalidIdempotencyKey()
    return untrusted_key


@writes
def answer_once(client_id: str, key: str, fingerprint: str,
                act: Callable[[], Answer]) -> tuple[Answer, bool]:
    """The kept answer of this key (and True: a replay), or `act()`'s, kept with the change it
    made in one unit of work. A refusal (an AuthError) is not kept: nothing changed.

    The key is claimed before acting: a concurrent request with the same key waits for the
    first one's unit of work (PostgreSQL: at the key's row; SQLite: at its one writer), then
    gets its answer instead of acting on a state the first one changed."""
    kept = _claim(client_id, key, fingerprint)
    if kept is not None:
        return kept, True
    try:
        answer = act()
    except AuthError:
        _release(client_id, key)  # (should the refusal's unit of work commit what it wrote)
        raise
    changed(update(IdempotentAnswer).where(
        IdempotentAnswer.client_id == client_id, IdempotentAnswer.key == key)
        .values(status=answer.status, body=answer.body)
        .execution_options(synchronize_session=False))
    return answer, False


_CLAIMED = 0  # the status of a claim whose answer is not kept yet: no other unit sees one


def _claim(client_id: str, key: str, fingerprint: str) -> Answer | None:
    """Claim the key for this request (None), or the answer kept for it by another request
    (IdempotencyKeyReused if another request made it, IdempotencyKeyInUse if it cannot be
    read)."""
    db.session.execute(delete(IdempotentAnswer).where(
        IdempotentAnswer.client_id == client_id, IdempotentAnswer.key == key,
        IdempotentAnswer.created_at <= now() - KEEP_FOR))
    row = IdempotentAnswer(client_id=client_id, key=key, request_hash=fingerprint,
                           status=_CLAIMED, body=None, created_at=now())
    if add_unless_taken(row):
        db.session.expunge(row)  # the UPDATE above writes its answer
        return None
    kept = kept_answer(client_id, key, fingerprint)
    if kept is None:
        raise IdempotencyKeyInUse()
    return kept


def _release(client_id: str, key: str) -> None:
    db.session.execute(delete(IdempotentAnswer).where(
        IdempotentAnswer.client_id == client_id, IdempotentAnswer.key == key))


def kept_answer(client_id: str, key: str, fingerprint: str) -> Answer | None:
    """The answer kept for this key, if the same request made it; IdempotencyKeyReused if
    another did."""
    row = db.session.execute(select(IdempotentAnswer).where(
        IdempotentAnswer.client_id == client_id, IdempotentAnswer.key == key)
        .execution_options(populate_existing=True)).scalar_one_or_none()
    if row is None or row.created_at <= now() - KEEP_FOR or row.status == _CLAIMED:
        return None
    if row.request_hash != fingerprint:
        raise IdempotencyKeyReused()
    return Answer(row.status, row.body)
