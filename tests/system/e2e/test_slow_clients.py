"""Slow clients against a 2-worker server: alone, two of them take it off the air; behind the
nginx example of docs/operators/deployment.md (Debian's nginx, run from a work folder), twenty
do not.

gunicorn's sync workers read each request themselves, so a client sending a byte a second holds
a worker. nginx reads requests whole before it passes them on; the deployment guide says the
service must sit behind such a proxy, and this runs the very configuration it shows.
"""

from __future__ import annotations

import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from tests.support.http import status_of
from tests.support.nginx import NginxError, documented_nginx_example, start_nginx
from tests.support.server import ROOT
from tests.support.sqlite_server import Server, ServerFactory

pytestmark = pytest.mark.e2e

TRICKLE_SECONDS = 4.0


@pytest.fixture
def nginx_in_front(server_factory: ServerFactory) -> Iterator[tuple[Server, str]]:
    """A 2-worker server, and the base URL of the documented nginx in front of it."""
    upstream = server_factory(workers=2)
    workdir = Path(tempfile.mkdtemp(prefix="svc-nginx-"))
    try:
        nginx = start_nginx(workdir, [[upstream.base_url.removeprefix("http://")]])
    except NginxError as error:
        shutil.rmtree(workdir, ignore_errors=True)
        pytest.fail(str(error))
    try:
        yield upstream, nginx.sites[0].base_url
    finally:
        nginx.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def answers_at_once(base_url: str, path: str, timeout: float = 1.0) -> bool:
    """Whether GET `path` is answered 200 within `timeout` seconds."""
    return status_of(base_url + path, timeout) == 200


def trickle(base_url: str, clients: int, seconds: float, probe: str,
            probe_timeout: float) -> list[bool]:
    """`clients` connections each send a login request a byte at a time, all together, for
    `seconds`; meanwhile GET `probe` is asked after each byte. Whether each probe was answered
    within `probe_timeout` seconds."""
    host, port = base_url.removeprefix("http://").split(":")
    body = b'{"email": "slow@example.com", "password": "a long enough passphrase"}'
    request = (b"POST /api/v2/auth/login HTTP/1.1\r\nHost: auth.example\r\n"
               b"Content-Type: application/json\r\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    answered = []
    with ExitStack() as stack:
        sockets = [stack.enter_context(closing(socket.create_connection((host, int(port)))))
                   for _ in range(clients)]
        started = time.monotonic()
        sent = 0
        while time.monotonic() - started < seconds:
            for sock in sockets:
                sock.sendall(request[sent:sent + 1])
            sent += 1
            time.sleep(0.25)
            answered.append(answers_at_once(base_url, probe, timeout=probe_timeout))
        assert sent < len(request), "the slow requests ended before the probes did"
    return answered


def test_two_slow_clients_take_a_bare_two_worker_server_off_the_air(
        server_factory: ServerFactory) -> None:
    """Why the proxy is required: without it, nothing else is answered while they trickle."""
    server = server_factory(workers=2)
    assert answers_at_once(server.base_url, "/health")
    probes = trickle(server.base_url, clients=2, seconds=TRICKLE_SECONDS, probe="/health",
                     probe_timeout=0.5)
    assert not any(probes[2:]), probes  # the first probes may beat the slow clients' headers
    assert answers_at_once(server.base_url, "/health", timeout=5)  # free again once they left


def test_behind_the_documented_nginx_slow_clients_hold_no_worker(
        nginx_in_front: tuple[Server, str]) -> None:
    upstream, base_url = nginx_in_front
    # A generous timeout: on a busy machine a quick answer may still take a moment.
    probes = trickle(base_url, clients=20, seconds=TRICKLE_SECONDS, probe="/health",
                     probe_timeout=3.0)
    assert all(probes), probes
    # Not one of the slow requests reached gunicorn: nginx still holds them all.
    assert not [line for line in upstream.access_lines() if line.path == "/api/v2/auth/login"]


def test_the_documented_example_spells_out_its_buffering_and_timeouts() -> None:
    """nginx's defaults buffer; the example says so, so that no one turns it off unawares."""
    example = documented_nginx_example()
    for directive in ("proxy_request_buffering on;", "proxy_buffering on;",
                      "client_header_timeout 10s;", "client_body_timeout 10s;"):
        assert directive in example


def test_make_run_says_it_is_for_one_machine() -> None:
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*?\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert run is not None and "for one machine" in run.group(1)
    assert "buffering proxy" in run.group(1)
