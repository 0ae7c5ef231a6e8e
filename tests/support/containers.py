"""podman for the image tests (tests/system/image, `make test-image`): the base image made here with
mmdebstrap from Debian's archive (no image registry is reached), the project's Containerfile built
on it, and containers run on podman's default network, reached at their own address.

Why each choice: docs/decisions.md, "Container image". The base is made once a machine: podman
keeps it under a tag that names the recipe (`base_image`), and a later run finds it there. The
Containerfile's dependency layer depends on pyproject.toml alone, so a rebuild after a code change
reuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.http import status_of
from tests.support.server import ROOT

CONTAINERS_CONF = ROOT / "tests" / "system" / "image" / "containers.conf"
INSTALL_HINT = "run scripts/install-test-tools image (it installs podman, runc and mmdebstrap)"
SUITE = "bookworm"  # Python 3.11, the version the official slim image has
# The base: Debian's minimal system with Python and its venv module (what the official slim
# image offers the Containerfile), without documentation, manual pages or translations.
MMDEBSTRAP = [
    "mmdebstrap", "--quiet", "--variant=minbase", "--format=tar",
    "--include=python3,python3-venv,ca-certificates",
    "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    SUITE, "-",
]
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# The wheels of the runtime dependencies, fetched by this machine's pip (and its cache) and kept
# between runs: pip in the build installs from them (through the network and a cold cache, the
# same install took three minutes).
WHEELS = Path(os.environ.get("SVC_TEST_WHEELS", "/var/cache/svc-auth-test/wheels"))
PORT = 8000  # the image's SVC_BIND


class PodmanError(RuntimeError):
    """podman or mmdebstrap is missing, or a command of theirs failed; the message says which."""


def podman(*args: str, timeout: float = 120, check: bool = True,
           stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    if shutil.which("podman") is None:
        raise PodmanError(f"podman not found: {INSTALL_HINT}")
    env = os.environ | {"CONTAINERS_CONF": str(CONTAINERS_CONF)}
    result = subprocess.run(["podman", *args], input=stdin, capture_output=True, env=env,
                            timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise PodmanError(f"podman {' '.join(args[:3])} ... failed ({result.returncode}):\n"
                          f"{result.stderr.decode(errors='replace')[-4000:]}")
    return result


def base_image() -> str:
    """The tag of the mmdebstrap base; made (about 40 s) when podman does not have it yet."""
    recipe = hashlib.sha256(json.dumps(MMDEBSTRAP).encode()).hexdigest()[:12]
    tag = f"localhost/svc-auth-base:{SUITE}-{recipe}"
    if podman("image", "exists", tag, check=False).returncode == 0:
        return tag
    if shutil.which("mmdebstrap") is None:
        raise PodmanError(f"mmdebstrap not found: {INSTALL_HINT}")
    made = subprocess.run(MMDEBSTRAP, capture_output=True, timeout=900, check=False)
    if made.returncode != 0:
        raise PodmanError(f"mmdebstrap failed:\n{made.stderr.decode(errors='replace')[-4000:]}")
    podman("import", "-", tag, stdin=made.stdout, timeout=300)
    return tag


def wheels(base: str) -> Path:
    """The runtime dependencies' wheels for the base's Python (its whole version: a dependency
    may depend on it, redis on async-timeout before 3.11.3), in WHEELS."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    python_version = podman("run", "--rm", base, "python3", "-c",
                            "import platform; print(platform.python_version())"
                            ).stdout.decode().strip()
    # Fetched once for each pyproject.toml and Python (pip resolving again costs a minute).
    recipe = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()
                            + python_version.encode()).hexdigest()[:16]
    stamp = WHEELS / f".fetched-{recipe}"
    if stamp.exists():
        return WHEELS
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
         "--only-binary=:all:", "--python-version", python_version, "--dest", str(WHEELS),
         "setuptools>=69", str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    if fetched.returncode != 0:
        raise PodmanError(f"pip download of the runtime wheels failed:\n{fetched.stderr[-4000:]}")
    stamp.touch()
    return WHEELS


def build_image(tag: str, base: str, context: Path = ROOT) -> None:
    """The Containerfile as shipped, on `base`. Docker's format keeps the HEALTHCHECK (OCI's has
    no field for it). pip in the build takes what it can from `wheels()` and the rest from the
    index (pip download evaluates a python_full_version marker for this machine's Python, not
    the base's); where this machine trusts a certificate authority of its own (a proxy that opens
    TLS), pip is handed the machine's bundle. Through the Containerfile's pip arguments: nothing
    of them stays in the image."""
    args = ["build", "--format", "docker", "--build-arg", f"BASE={base}", "-t", tag,
            "--volume", f"{wheels(base)}:/run/wheels:ro",
            "--build-arg", "PIP_FIND_LINKS=/run/wheels"]
    if HOST_CA_BUNDLE.exists():
        args += ["--volume", f"{HOST_CA_BUNDLE}:/run/host-ca.crt:ro",
                 "--build-arg", "PIP_CERT=/run/host-ca.crt"]
    podman(*args, str(context), timeout=1200)


def build_stand_in(name: str, base: str) -> str:
    """tests/system/image/images/NAME: the official image NAME's stand-in, from Debian's package."""
    tag = f"localhost/svc-auth-test-{name}:latest"
    podman("build", "--build-arg", f"BASE={base}", "-t", tag,
           str(ROOT / "tests" / "system" / "image" / "images" / name), timeout=900)
    return tag


def production_env() -> dict[str, str]:
    """Production settings for a container on its own: SQLite in the instance volume, mail
    written to files there (the test reads nothing of it)."""
    return {
        "SVC_ENV": "production",
        "SVC_SECRET_KEY": secrets.token_urlsafe(48),
        "SVC_PUBLIC_URL": "https://auth.example",
        "SVC_MAIL_URL": "file:///var/lib/svc-auth/mail",
        "SVC_DATABASE_URL": "sqlite:////var/lib/svc-auth/svc-auth.db",
    }


def env_args(env: dict[str, str]) -> list[str]:
    return [arg for name, value in env.items() for arg in ("--env", f"{name}={value}")]


@dataclass
class Container:
    name: str
    address: str

    @property
    def base_url(self) -> str:
        return f"http://{self.address}:{PORT}"

    def logs(self) -> str:
        result = podman("logs", self.name, check=False)
        return (result.stdout + result.stderr).decode(errors="replace")[-6000:]


def run_once(image: str, env: dict[str, str], volume: str, *command: str,
             ) -> subprocess.CompletedProcess[bytes]:
    """`command` in a container of its own that is removed once it ends."""
    return podman("run", "--rm", *env_args(env), "--volume", f"{volume}:/var/lib/svc-auth",
                  image, *command, check=False, timeout=180)


@contextmanager
def serving(image: str, env: dict[str, str], volume: str, timeout: float = 60,
            ) -> Iterator[Container]:
    """The image's own command (gunicorn) in a container on podman's network, once GET /health
    answers (any status); removed afterwards."""
    name = f"svc-auth-test-{secrets.token_hex(4)}"
    # No timer for the healthcheck (podman would ask systemd for one): the test runs it.
    podman("run", "--detach", "--name", name, "--health-interval", "disable",
           *env_args(env), "--volume", f"{volume}:/var/lib/svc-auth", image)
    try:
        address = podman("inspect", "--format", "{{.NetworkSettings.IPAddress}}",
                         name).stdout.decode().strip()
        container = Container(name, address)
        deadline = time.monotonic() + timeout
        while status_of(container.base_url + "/health", 1.0) is None:
            running = podman("inspect", "--format", "{{.State.Running}}", name).stdout
            if b"true" not in running or time.monotonic() > deadline:
                raise PodmanError(f"the container did not serve:\n{container.logs()}")
            time.sleep(0.2)
        yield container
    finally:
        podman("rm", "--force", "--time", "5", name, check=False)


@contextmanager
def volume() -> Iterator[str]:
    name = f"svc-auth-test-{secrets.token_hex(4)}"
    podman("volume", "create", name)
    try:
        yield name
    finally:
        podman("volume", "rm", "--force", name, check=False)
