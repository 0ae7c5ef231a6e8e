"""Mail a request schedules starts once its answer has been sent.

A WSGI middleware around the app: the request runs inside the outbox's `holding()`, and what it
scheduled is handed to the outbox when the server has taken the last chunk of the answer or
closes it, whichever comes first. Until then nothing competes with the answer for the
interpreter, so an answer that mails (forgot-password for an account that exists) takes the
time of one that does not.

Held jobs start whatever the answer: callers schedule mail after committing what it reports (a
password was changed, an account was created), so a page that fails afterwards, even with an
exception that escapes the app, must not lose the notice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from app.domain.mail import holding

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


class MailAfterResponse:
    def __init__(self, wsgi_app: WSGIApplication) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        with holding() as held:
            try:
                body = self.wsgi_app(environ, start_response)
            except BaseException:
                held.release()  # no answer will be sent: start them now
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
