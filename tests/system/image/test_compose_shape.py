"""The compose file's production shape (deploy/compose/compose.yaml) run with podman, container
by container, as compose would run it: PostgreSQL, Redis, the migration, the service, and nginx
in front with TLS from a mounted certificate, on one network where each reaches the others by
service name; it ends in a sign-up and a sign-in through nginx over TLS.

The services' commands, environments and mounts are read from compose.yaml and .env.example
(with a secret key, a mail folder and a password of the test's); PostgreSQL, Redis and nginx are
stand-ins built here from Debian's packages (tests/system/image/images), since no registry is
reachable.
`make test-image` runs it (SVC_TEST_IMAGE=1).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.accounts import PASSWORD
from tests.support.containers import build_stand_in, env_args, podman
from tests.support.server import ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("SVC_TEST_IMAGE") != "1",
                       reason="the image tests run in `make test-image` (SVC_TEST_IMAGE=1)"),
]

COMPOSE = ROOT / "deploy" / "compose"
HOST = "auth.example"


def _substitute(value: str, variables: dict[str, str]) -> str:
    """compose's ${NAME}, ${NAME:-default} and ${NAME:?error}."""
    def one(match: re.Match[str]) -> str:
        name, operator, default = match.group(1), match.group(2), match.group(3) or ""
        if name in variables and variables[name]:
            return variables[name]
        assert operator != ":?", f"{name} must be set"
        return default
    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def _dotenv(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if line.strip() and not line.startswith("#") and "=" in line)
    return {name.strip(): value.strip() for name, value in pairs}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, base: str, image: str,
               ) -> Iterator[tuple[str, Path]]:
    """The shape running; (nginx's address, the certificate to trust)."""
    work = tmp_path_factory.mktemp("compose")
    tls = work / "tls"
    tls.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", f"/CN={HOST}",
                    "-addext", f"subjectAltName=DNS:{HOST}", "-keyout", str(tls / "privkey.pem"),
                    "-out", str(tls / "fullchain.pem")], check=True, capture_output=True)
    (tls / "privkey.pem").chmod(0o644)  # read by nginx's workers in the container
    env_file = _dotenv(COMPOSE / ".env.example") | {
        "POSTGRES_PASSWORD": secrets.token_hex(16),
        "SVC_SECRET_KEY": secrets.token_urlsafe(48),
        "SVC_PUBLIC_URL": f"https://{HOST}",
        "SVC_MAIL_URL": "file:///var/lib/svc-auth/mail",
        "SVC_METRICS_TOKEN": secrets.token_urlsafe(24),
        "SVC_AUTH_IMAGE": image,
        "POSTGRES_IMAGE": build_stand_in("postgres", base),
        "REDIS_IMAGE": build_stand_in("redis", base),
        "NGINX_IMAGE": build_stand_in("nginx", base),
        "TLS_DIR": str(tls),
    }
    env_file.pop("SVC_MAIL_FROM", None)
    compose = yaml.safe_load((COMPOSE / "compose.yaml").read_text())
    suffix = secrets.token_hex(3)
    network = f"svc-auth-test-{suffix}"
    podman("network", "create", network)
    started: list[str] = []
    volumes: set[str] = set()

    def run(service: str, *, detach: bool = True) -> subprocess.CompletedProcess[bytes]:
        spec = compose["services"][service]
        environment = {name: _substitute(str(value), env_file)
                       for name, value in (spec.get("environment") or {}).items()}
        if "env_file" in spec:
            environment = {name: value for name, value in env_file.items()
                           if name.startswith("SVC_")} | environment
        mounts = []
        for mount in spec.get("volumes", []):
            source, target, *mode = _substitute(mount, env_file).split(":")
            if source.startswith((".", "/")):
                source = str((COMPOSE / source).resolve())
            else:
                source = f"{source}-{suffix}"
                volumes.add(source)
            mounts += ["--volume", ":".join([source, target, *mode])]
        name = f"{service}-{suffix}"
        started.append(name)
        command = [str(part) for part in spec.get("command", [])]
        return podman("run", *(["--detach"] if detach else []), "--name", name,
                      "--network", network, "--network-alias", service,
                      "--health-interval", "disable", *env_args(environment), *mounts,
                      _substitute(spec["image"], env_file), *command,
                      timeout=300, check=False)

    try:
        assert run("postgres").returncode == 0
        assert run("redis").returncode == 0
        deadline = time.monotonic() + 60
        while podman("exec", f"postgres-{suffix}", "pg_isready", "-q", "-U", "svc_auth",
                     check=False).returncode != 0:
            assert time.monotonic() < deadline, podman("logs", f"postgres-{suffix}").stderr
            time.sleep(0.5)
        migrated = run("migrate", detach=False)
        assert migrated.returncode == 0, migrated.stderr.decode()[-3000:]
        assert run("svc-auth").returncode == 0
        assert run("nginx").returncode == 0
        ip = podman("inspect", "--format",
                    f"{{{{(index .NetworkSettings.Networks \"{network}\").IPAddress}}}}",
                    f"nginx-{suffix}").stdout.decode().strip()
        assert ip, podman("logs", f"nginx-{suffix}", check=False).stderr
        yield ip, tls / "fullchain.pem"
    finally:
        for name in reversed(started):
            podman("rm", "--force", "--time", "3", name, check=False)
        for volume in volumes:
            podman("volume", "rm", "--force", volume, check=False)
        podman("network", "rm", "--force", network, check=False)


def _https(ip: str, certificate: Path, method: str, path: str, body: bytes | None = None,
           ) -> tuple[int, str]:
    """`method path` to nginx at `ip` as https://auth.example: the name is sent (SNI, Host) and
    the certificate checked against it."""
    context = ssl.create_default_context(cafile=str(certificate))
    connection = http.client.HTTPSConnection(HOST, 443, context=context, timeout=15)
    connection.sock = context.wrap_socket(socket.create_connection((ip, 443), timeout=15),
                                          server_hostname=HOST)
    try:
        connection.request(method, path, body=body, headers={
            "Content-Type": "application/json", "Accept": "application/json"})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


def test_the_compose_shape_signs_a_person_in_through_nginx_over_tls(
        deployment: tuple[str, Path]) -> None:
    ip, certificate = deployment
    deadline = time.monotonic() + 90
    while True:
        try:
            status, text = _https(ip, certificate, "GET", "/health/ready")
        except OSError as error:
            status, text = 0, str(error)
        if status == 200:
            break
        assert time.monotonic() < deadline, f"/health/ready through nginx: {status} {text}"
        time.sleep(0.5)
    email = f"compose-{secrets.token_hex(4)}@example.com"
    credentials = json.dumps({"email": email, "password": PASSWORD}).encode()
    status, text = _https(ip, certificate, "POST", "/api/v2/auth/signup", credentials)
    assert status == 201, text
    status, text = _https(ip, certificate, "POST", "/api/v2/auth/login", credentials)
    assert status == 200, text
    assert json.loads(text)["access_token"]
    status, text = _https(ip, certificate, "GET", "/health/ready")
    assert json.loads(text) == {"status": "ok", "database": "ok", "redis": "ok"}, text
