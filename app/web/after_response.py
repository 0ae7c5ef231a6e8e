"""What a request gave the outbox (a mail, an event for the sites) is worked on once its answer
has been sent: a WSGI middleware holds the wake-ups of the outbox's lanes until then, so an answer
that mails takes the time of one that does not.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from app.infra.outbox_worker import Outbox, holding

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment


class OutboxAfterResponse:
    """Starts the outbox's threads in this process, and wakes its lanes after the answer."""

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
