"""Idempotency-Key on the admin API's writes: a retry with the same key and request gets the
first answer back instead of acting twice (billing webhooks are retried by their senders). The
answer is kept in the unit of work of the change, so a change and its kept answer commit
together or not at all; a key kept for another request is a conflict."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import delete

from app.db.rows import add_unless_taken
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
    made in one unit of work. A refusal (an AuthError) is not kept: nothing changed."""
    kept = kept_answer(client_id, key, fingerprint)
    if kept is not None:
        return kept, True
    answer = act()
    keep_answer(client_id, key, fingerprint, answer)
    return answer, False


def kept_answer(client_id: str, key: str, fingerprint: str) -> Answer | None:
    """The answer kept for this key, if the same request made it; IdempotencyKeyReused if
    another did."""
    row = db.session.get(IdempotentAnswer, (client_id, key))
    if row is None or row.created_at <= now() - KEEP_FOR:
        return None
    if row.request_hash != fingerprint:
        raise IdempotencyKeyReused()
    return Answer(row.status, row.body)


def keep_answer(client_id: str, key: str, fingerprint: str, answer: Answer) -> None:
    """Keep the answer, in the caller's unit of work; IdempotencyKeyInUse when a concurrent
    request with the key kept one first (this one's change then rolls back)."""
    db.session.execute(delete(IdempotentAnswer).where(
        IdempotentAnswer.client_id == client_id, IdempotentAnswer.key == key,
        IdempotentAnswer.created_at <= now() - KEEP_FOR))
    row = IdempotentAnswer(client_id=client_id, key=key, request_hash=fingerprint,
                           status=answer.status, body=answer.body, created_at=now())
    if not add_unless_taken(row):
        raise IdempotencyKeyInUse()

