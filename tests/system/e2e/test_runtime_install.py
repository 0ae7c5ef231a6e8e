"""A production install, as an operator makes it: the project installed without extras into a
clean virtual environment, migrated, and served by gunicorn with the shipped gunicorn.conf.py
from the checkout, with production settings. A runtime import that pyproject.toml does not
declare fails here (the test suite's own environment has the dev extras, which hide it).

The requests go through the standard library's urllib (tests/support/http.py), so the test
itself needs nothing that the clean environment lacks. pip's cache (and the machine's wheel
folders) make the install take about 20 s; it needs no network when every wheel is cached.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.accounts import PASSWORD
from tests.support.http import call
from tests.support.journeys import sign_up_in_verify_and_refresh
from tests.support.server import ROOT, GunicornError, start_gunicorn

pytestmark = pytest.mark.e2e

INSTALL_TIMEOUT = 300
STARTUP_TIMEOUT = 30.0
PUBLIC_URL = "https://auth.example"  # production refuses http; nothing here dials it


@dataclass
class Install:
    """A clean virtual environment with the project and its runtime dependencies only."""

    workdir: Path
    bin: Path

    def env(self) -> dict[str, str]:
        """The environment of an operator's shell: none of the test run's settings, the clean
        environment first on PATH, and production settings."""
        inherited = {name: value for name, value in os.environ.items()
                     if not name.startswith(("SVC_", "PYTHON", "VIRTUAL_ENV", "FLASK_"))
                     and name not in ("WEB_CONCURRENCY", "GUNICORN_CMD_ARGS")}
        return inherited | {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "VIRTUAL_ENV": str(self.bin.parent),
            "SVC_ENV": "production",
            "SVC_SECRET_KEY": secrets.token_urlsafe(48),
            "SVC_PUBLIC_URL": PUBLIC_URL,
            "SVC_MAIL_URL": f"file://{self.workdir / 'mail'}",
            "SVC_INSTANCE_PATH": str(self.workdir / "instance"),
            # Named: in production the CLI takes no database for granted.
            "SVC_DATABASE_URL": f"sqlite:///{self.workdir / 'instance' / 'svc-auth.db'}",
            "PROMETHEUS_MULTIPROC_DIR": str(self.workdir / "metrics"),
        }

    def run(self, *command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.bin / command[0]), *command[1:]], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120, check=False)


def _install(workdir: Path) -> Install:
    # A copy of what the package is built from: setuptools writes build/ and *.egg-info next to
    # its source, which must not land in the checkout (nor race another test run's).
    source = workdir / "source"
    source.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", source)
    shutil.copytree(ROOT / "app", source / "app",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    venv = workdir / "venv"
    # No pip inside it: this process's pip installs into it (`--python`), which saves the ten
    # seconds ensurepip takes. `venv` makes it from the base interpreter, so nothing of the test
    # run's environment is visible inside it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=60)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", "--no-compile", "--disable-pip-version-check", str(source)],
        capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False)
    if result.returncode != 0:
        pytest.fail(f"pip install of the project (no extras) failed:\n{result.stderr[-4000:]}")
    return Install(workdir, venv / "bin")


@pytest.fixture(scope="module")
def install() -> Iterator[Install]:
    workdir = Path(tempfile.mkdtemp(prefix="svc-install-"))
    try:
        yield _install(workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def production_server(install: Install) -> Iterator[str]:
    env = install.env()
    migrated = install.run("flask", "--app", "wsgi", "db", "upgrade", env=env)
    assert migrated.returncode == 0, (
        f"flask db upgrade failed in the clean environment:\n{migrated.stdout}{migrated.stderr}")
    # Exactly the deployment guide's command, run from the checkout; the port is the test's.
    try:
        server = start_gunicorn(install.workdir, env, name="gunicorn",
                                command=[str(install.bin / "gunicorn")],
                                config=Path("gunicorn.conf.py"), timeout=STARTUP_TIMEOUT)
    except GunicornError as error:
        pytest.fail(str(error))
    try:
        yield server.base_url
    finally:
        server.stop()


def test_a_production_install_signs_up_logs_in_verifies_and_refreshes(
        production_server: str) -> None:
    sign_up_in_verify_and_refresh(production_server,
                                  f"operator-{secrets.token_hex(5)}@example.com")


def test_a_production_install_serves_the_api_reference(production_server: str) -> None:
    """The reference page's Swagger UI comes with the runtime dependencies, from this origin."""
    status, page = call("GET", production_server + "/api/docs")
    assert status == 200, page
    bundle = re.search(r'src="(/api/docs/swagger-ui/[^"]+/swagger-ui-bundle\.js)"', page)
    assert bundle is not None, page[:2000]
    status, script = call("GET", production_server + bundle[1])
    assert status == 200 and "SwaggerUIBundle" in script


def test_a_production_install_sends_mail(install: Install, production_server: str) -> None:
    email = f"mailed-{secrets.token_hex(5)}@example.com"
    status, _ = call("POST", production_server + "/api/v2/auth/signup",
                     {"email": email, "password": PASSWORD})
    assert status == 201
    deadline = time.monotonic() + 10  # the confirmation goes out once the answer is sent
    while time.monotonic() < deadline:
        mails = [path.read_text() for path in (install.workdir / "mail").glob("*.eml")]
        if any(email in mail for mail in mails):
            return
        time.sleep(0.1)
    pytest.fail(f"no confirmation mail to {email} in the mail folder")


def test_the_instance_folder_is_the_owners_alone(install: Install, production_server: str) -> None:
    instance = install.workdir / "instance"
    assert stat.S_IMODE(instance.stat().st_mode) == 0o700
    for path in instance.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path.name


def test_the_clean_environment_holds_no_development_extra(install: Install) -> None:
    """What the test above proves is only worth something if the dev extras are really absent."""
    probe = install.run("python", "-c", "import importlib.util as u;"
                        " print([m for m in ('pytest', 'aiosmtpd', 'hypothesis')"
                        " if u.find_spec(m)])", env=install.env())
    assert probe.returncode == 0 and probe.stdout.strip() == "[]", probe
