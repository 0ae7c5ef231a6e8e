"""Mail a request promised is worked on once its answer has been sent.

A WSGI middleware around the app: it starts the process's outbox worker if it is not running
(the first request after a fork), and runs the request inside the outbox's `holding()`. A mail
job the request commits (domain/mail/outbox.py) wakes the worker only when the server has taken the
last chunk of the answer or closes it, whichever comes first. Until then nothing competes with
the answer for the interpreter, so an answer that mails (forgot-password for an account that
exists) takes the time of one that does not.

Held wake-ups happen whatever the answer: a job is committed with what it reports (a password
was changed, an account was created), so a page that fails afterwards, even with an exception
that escapes the app, must not leave the notice waiting for the next poll.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from app.infra.outbox_worker import Outbox, holding

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


class MailAfterResponse:
    def __init__(self, wsgi_app: WSGIApplication, outbox: Outbox) -> None:
        self.wsgi_app, self.outbox = wsgi_app, outbox

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        self.outbox.ensure_running()
        with holding() as held:
            try:
                body = self.wsgi_app(environ, start_response)
            except BaseException:
                held.release()  # no answer will be sent: wake it now
                raise
        if not held:
            return body  # untouched: a file wrapper stays one, for the server's sendfile
        return _ThenRelease(body, held.release)


class _ThenRelease:
    """The answer's body, which calls `release` after its last chunk or when closed."""

    def __init__(self, body: Iterable[bytes], release: Callable[[], None]) -> None:
        self._body, self._chunks, self._release = body, iter(body), release

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            self._release()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._release()
