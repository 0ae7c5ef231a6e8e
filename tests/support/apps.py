"""Apps built on the factory as the tests build them: a fresh database, a cheap argon2id, a clock
the test moves, mail kept in memory, templates and route builders compiled once a run, and a test
client that reads every answer to its end."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from sqlalchemy import select
from werkzeug.routing import Rule

from app import create_app
from app.extensions import db
from app.infra.lanes import MAIL
from app.infra.mail_lane import MailSending
from app.models.leased_job import LeasedJob


class FakeClock:
    """Stands in for the wall clock: `advance()` instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class TemplateCode(BytecodeCache):
    """Compiled templates kept in memory for every app of the test run: each test's app would
    otherwise compile again every template it renders (the apps are built alike, and Jinja checks
    the source's checksum)."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


TEMPLATE_CODE = TemplateCode()


def _shared_route_builders() -> None:
    """Werkzeug compiles two small Python functions for each route of each app (what url_for
    calls), which was most of what building an app cost; every test's app has the same routes.
    A builder is made from the route, its parsed parts and its defaults, and takes the rule it
    builds for as an argument: one built for a route serves every app's copy of it."""
    compile_builder = Rule._compile_builder
    builders: dict[tuple[Any, ...], Any] = {}

    def shared(rule: Rule, append_unknown: bool = True) -> Any:
        defaults = tuple(sorted((name, repr(value)) for name, value in
                                (rule.defaults or {}).items()))
        key = (rule.rule, tuple(rule._trace), defaults, append_unknown)
        if key not in builders:
            builders[key] = compile_builder(rule, append_unknown)
        return builders[key]

    Rule._compile_builder = shared  # type: ignore[method-assign]


_shared_route_builders()


class ServerLikeClient(FlaskClient):
    """Reads every answer to its end and closes it, as a server does: mail a request scheduled
    starts only then (app/after_response.py)."""

    def open(self, *args: Any, buffered: bool = True, **kwargs: Any) -> Any:
        return super().open(*args, buffered=buffered, **kwargs)


def build_app(instance_path: Any, clock: FakeClock, settings: dict[str, Any],
              database_url: str) -> Flask:
    """An app as the `app` fixture builds it; another one on the same database is another
    instance of the service. The caller creates the tables and calls `dispose_app`."""
    app = create_app({
        "INSTANCE_PATH": str(instance_path),
        "SQLALCHEMY_DATABASE_URI": database_url,
        "MAIL_URL": "memory://", "MAIL_RETRY_DELAY": 0.01,
        "SECRET_KEY": "test",
        "CLOCK": clock,
        # A cheap argon2id, so tests run fast; the production parameters have their own test.
        "ARGON2_MEMORY_COST": 64, "ARGON2_TIME_COST": 1, "ARGON2_PARALLELISM": 1,
        "RATELIMIT_ENABLED": False,
        **settings,
    })
    app.test_client_class = ServerLikeClient
    app.jinja_env.bytecode_cache = TEMPLATE_CODE
    return app


def dispose_app(app: Flask) -> None:
    # Its threads would go on looking at the database: each stops after the job it is on. No
    # drain first: a test may leave jobs that are not due (a retry's backoff, a hung receiver),
    # and the wait for them would be the whole deadline.
    app.extensions["svc-outbox"].stop()
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


# How long a test waits for the outbox to finish: a deadline, not a pause (drain returns as soon
# as nothing is pending), long enough for a machine loaded many times over its cores.
OUTBOX_DEADLINE_SECONDS = 60.0
# aiosmtpd's Controller waits for its server thread 1 s unless told: the tests' SMTP servers get
# the same deadline (it returns as soon as the thread is up).
os.environ.setdefault("AIOSMTPD_CONTROLLER_TIMEOUT", str(OUTBOX_DEADLINE_SECONDS))


def still_pending(outbox: Any) -> str:
    """The pending jobs of every lane, each with what a failure to finish needs said: its lane,
    kind, attempts, last error, when it is next due and who holds it until when."""
    with outbox.app.app_context():
        try:
            return "; ".join(
                f"{lane.name}:{job.kind} attempts={job.attempts} error={job.last_error}"
                f" next={job.next_attempt_at:%H:%M:%S} claimed_by={job.claimed_by}"
                f" until={job.claimed_until and f'{job.claimed_until:%H:%M:%S}'}"
                for lane in outbox.lanes for job in db.session.scalars(
                    select(lane.model).where(lane.model.status == LeasedJob.PENDING)))
        finally:
            db.session.remove()


def drained(outbox: Any) -> None:
    """Wait for `outbox` to have no job pending; past the deadline, fail saying which were."""
    assert outbox.drain(OUTBOX_DEADLINE_SECONDS), (
        f"the outbox still had jobs after {OUTBOX_DEADLINE_SECONDS:.0f} s: "
        f"{still_pending(outbox)}")


class Mailbox:
    """What the app mailed, once the outbox has finished its work."""

    def __init__(self, app: Flask) -> None:
        self._app, self._outbox = app, app.extensions["svc-outbox"]

    @property
    def messages(self) -> list[Any]:
        drained(self._outbox)
        return list(mailing(self._app).transport.sent)

    def to(self, address: str) -> list[Any]:
        return [m for m in self.messages if m["To"] == address]

    def last_link(self, address: str, path: str) -> str:
        """The last link to `path` mailed to `address` (from the plain-text part)."""
        for message in reversed(self.to(address)):
            text = message.get_body(("plain",)).get_content()
            found = re.search(r"(https?://\S+" + re.escape(path) + r"\?token=\S+)", text)
            if found:
                return found.group(1)
        raise AssertionError(f"no {path} link was mailed to {address}")


def mailing(app: Flask) -> MailSending:
    """How the app's outbox sends mail: its transport (tests swap it), handlers and sender."""
    found = app.extensions["svc-outbox"].lane(MAIL).perform
    assert isinstance(found, MailSending)
    return found
