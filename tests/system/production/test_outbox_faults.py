"""No promised mail is lost (issue 13, item 3): gunicorn instances on PostgreSQL whose database
goes away while the outbox works, or whose workers are killed with mail in flight; and a mail the
server took from a worker killed before it recorded that goes again as the same message (issue
21, item 8a)."""

from __future__ import annotations

import asyncio
import email
import email.policy
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiosmtpd.controller import Controller

from tests.support.api import mailed_links, new_email, open_mailed_link, post, signup
from tests.support.deployment import (
    NEW_PASSWORD,
    InstanceFactory,
    migrate,
    restart_postgres,
    shared_settings,
)
from tests.support.http import wait_until
from tests.support.servers import LOOPBACK

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

pytestmark = pytest.mark.e2e


def links(mail: Path, addresses: list[str], path: str) -> dict[str, list[str]]:
    return {address: mailed_links(mail, address, path) for address in addresses}


def test_the_database_going_away_while_mail_is_sent_loses_and_repeats_nothing(
        own_postgres: PostgresServer, instance_factory: InstanceFactory,
        workdir: Path) -> None:
    database_url = own_postgres.create_database("svc")
    migrate(workdir, database_url)
    mail = workdir / "mail"
    # A claim that committed just before the database went away, its answer lost, waits out
    # its lease: a short one, so that the wait below covers it.
    instance = instance_factory({**shared_settings(database_url), "SVC_MAIL_URL": f"file://{mail}",
                                 "SVC_MAIL_RETRY_DELAY": "0.2", "SVC_OUTBOX_LEASE_SECONDS": "10"},
                                name="outbox-db")
    addresses = [new_email("dbmail") for _ in range(20)]
    for address in addresses:
        signup(instance, address)
    wait_until(lambda: all(links(mail, addresses, "/confirm-email").values()), 20,
               "every confirmation mail")

    for address in addresses:  # promised: every answer is a 202
        answer = post(instance, "/api/v2/auth/forgot-password", {"email": address})
        assert answer.status_code == 202, answer.text
    own_postgres.stop()  # while the workers look accounts up, make tokens and send
    try:
        time.sleep(2)
        refused = post(instance, "/api/v2/auth/forgot-password", {"email": addresses[0]})
        assert refused.status_code == 503, refused.text  # nothing promised while it is down
    finally:
        restart_postgres(own_postgres)

    wait_until(lambda: all(links(mail, addresses, "/reset-password").values()), 60,
               "every reset mail")
    time.sleep(1)  # any second copy would be on its way by now
    mailed = links(mail, addresses, "/reset-password")
    assert {address: len(found) for address, found in mailed.items()} == dict.fromkeys(
        addresses, 1)
    for address, [link] in mailed.items():  # each mailed token is the one that was stored
        reset = post(instance, "/api/v2/auth/reset-password",
                     {"token": link.rsplit("token=", 1)[1], "new_password": NEW_PASSWORD})
        assert reset.status_code == 200, (address, reset.text)


@pytest.fixture
def silent_mail_server() -> Iterator[int]:
    """A port that takes connections and never says a word: every send hangs there."""
    with socket.socket() as server:
        server.bind((LOOPBACK, 0))
        server.listen(200)
        yield int(server.getsockname()[1])


def test_mail_in_flight_and_queued_survives_killed_workers(
        migrated_postgres_url: str, instance_factory: InstanceFactory, workdir: Path,
        silent_mail_server: int) -> None:
    """40 forgot-password answers while every send hangs, then every process of the instance
    is killed (kill -9): the next instance sends every mail, the ones a dead worker held
    once their lease is over."""
    settings = {**shared_settings(migrated_postgres_url), "SVC_OUTBOX_LEASE_SECONDS": "3"}
    first = instance_factory({**settings, "SVC_MAIL_TIMEOUT": "60",
                              "SVC_MAIL_URL": f"smtp://{LOOPBACK}:{silent_mail_server}"},
                             name="outbox-killed")
    addresses = [new_email("killed") for _ in range(10)]
    for address in addresses:
        signup(first, address)
    for address in addresses * 4:
        assert post(first, "/api/v2/auth/forgot-password", {"email": address}).status_code == 202
    time.sleep(0.5)  # the workers are each stuck in a send
    for pid in [*first.worker_pids(), first.pid]:
        os.kill(pid, signal.SIGKILL)
    first.process.wait(timeout=10)

    mail = workdir / "mail"
    # The dead workers' leases (3 s) are written; the next instance's own are long, so that a
    # stall between its claim and its record never lets its other worker send a mail again.
    instance_factory({**settings, "SVC_MAIL_URL": f"file://{mail}",
                      "SVC_OUTBOX_LEASE_SECONDS": "60"}, name="outbox-next")
    wait_until(lambda: all(len(found) == 4 for found in
                           links(mail, addresses, "/reset-password").values()), 60,
               "four reset mails to every address")
    assert all(len(found) == 1 for found in links(mail, addresses, "/confirm-email").values())
    time.sleep(1)
    assert all(len(found) == 4 for found in links(mail, addresses, "/reset-password").values())


class TakesThenHangs:
    """An aiosmtpd handler that takes every message ("250 OK") and keeps its bytes, then never
    answers QUIT: the worker that sent it hangs after the mail server took its mail."""

    def __init__(self) -> None:
        self.taken: list[bytes] = []

    async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]  # noqa: N802
        self.taken.append(envelope.content)
        return "250 OK"

    async def handle_QUIT(self, server, session, envelope):  # type: ignore[no-untyped-def]  # noqa: N802
        await asyncio.Event().wait()


@pytest.fixture
def taking_mail_server() -> Iterator[tuple[int, TakesThenHangs]]:
    handler = TakesThenHangs()
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port = int(probe.getsockname()[1])
    controller = Controller(handler, hostname=LOOPBACK, port=port)
    controller.start()
    try:
        yield port, handler
    finally:
        controller.stop()


def as_sent(raw: bytes) -> tuple[str, bytes]:
    """A message's Message-ID and body, whether taken over SMTP (CRLF) or from a file (LF)."""
    head, _, body = raw.replace(b"\r\n", b"\n").partition(b"\n\n")
    message = email.message_from_bytes(head + b"\n\n", policy=email.policy.default)
    return str(message["Message-ID"]).strip(), body


def test_mail_the_server_took_from_killed_workers_goes_again_as_the_same_message(
        migrated_postgres_url: str, instance_factory: InstanceFactory, workdir: Path,
        taking_mail_server: tuple[int, TakesThenHangs]) -> None:
    """Sign-ups while the mail server takes each confirmation mail and then hangs: every process
    of the instance is killed (kill -9) after the server took a mail from each running worker,
    before they recorded it. After the lease the next instance sends those mails again, each the
    same message as the first copy (its Message-ID and body, byte for byte), whose link confirms
    the address once; and every other mail once."""
    port, server = taking_mail_server
    settings = {**shared_settings(migrated_postgres_url), "SVC_OUTBOX_LEASE_SECONDS": "3"}
    first = instance_factory({**settings, "SVC_MAIL_TIMEOUT": "60",
                              "SVC_MAIL_URL": f"smtp://{LOOPBACK}:{port}"}, name="outbox-taken")
    addresses = [new_email("taken") for _ in range(6)]
    for address in addresses:
        signup(first, address)
    wait_until(lambda: server.taken, 20, "a mail the server took")
    time.sleep(0.5)  # the other worker, woken by its own sign-ups, takes one too
    for pid in [*first.worker_pids(), first.pid]:
        os.kill(pid, signal.SIGKILL)
    first.process.wait(timeout=10)
    taken = [as_sent(raw) for raw in server.taken]

    mail = workdir / "mail"
    second = instance_factory({**settings, "SVC_MAIL_URL": f"file://{mail}",
                               "SVC_OUTBOX_LEASE_SECONDS": "60"}, name="outbox-after")
    wait_until(lambda: all(links(mail, addresses, "/confirm-email").values()), 60,
               "a confirmation mail to every address")
    time.sleep(1)  # any further copy would be on its way by now
    mailed = links(mail, addresses, "/confirm-email")
    assert all(len(found) == 1 for found in mailed.values())
    again = [as_sent(eml.read_bytes()) for eml in mail.glob("*.eml")]
    assert taken and all(copy in again for copy in taken)  # each taken mail, the same again
    for address, [link] in mailed.items():
        path = link[link.index("/confirm-email"):]
        assert open_mailed_link(second, path).status_code == 200, address
        assert open_mailed_link(second, path).status_code == 400, address  # once
