"""The README's quickstarts, as the README writes them: each fenced block that follows a marker

    <!-- quickstart: PATH -->              a shell block, run in order with the path's others
    <!-- quickstart: PATH file NAME -->    a file to save, NAME relative to the checkout

is taken verbatim. A path's shell blocks are joined into one script, run by one bash in a
checkout-like folder (`.venv`, `wsgi.py` and `app` linked to this checkout and its virtual
environment) as a reader runs them in one terminal; its last command serves the site.

Only the addresses change: the service and the site run on free ports here, not on 5000 and
8000, so `127.0.0.1:5000` becomes the service's address and `8000` the site's port. Each must
appear in the path's blocks, so a README that moves them fails the test instead of passing it by
accident.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.server import ROOT

README = ROOT / "README.md"
SERVICE_ADDRESS = "127.0.0.1:5000"
SITE_PORT = "8000"
MARKED = re.compile(r"<!-- quickstart: (\S+)(?: file (\S+))? -->\n```[^\n]*\n(.*?)\n```",
                    re.DOTALL)


@dataclass
class Quickstart:
    shell: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    def script(self) -> str:
        return "\n".join(self.shell) + "\n"


def quickstarts(readme: str | None = None) -> dict[str, Quickstart]:
    """Every path's blocks, in the README's order."""
    found: dict[str, Quickstart] = {}
    for path, name, block in MARKED.findall(readme if readme is not None else README.read_text()):
        quickstart = found.setdefault(path, Quickstart())
        if name:
            quickstart.files[name] = block + "\n"
        else:
            quickstart.shell.append(block)
    return found


def addressed(text: str, service: str, site_port: int) -> str:
    return text.replace(SERVICE_ADDRESS, service).replace(SITE_PORT, str(site_port))


@dataclass
class RunningQuickstart:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def checkout_like(workdir: Path) -> Path:
    """A folder a reader's commands can run in as in the checkout: `.venv` is the virtual
    environment running the tests, `wsgi.py` and `app` this checkout's."""
    checkout = workdir / "svc-auth"
    checkout.mkdir(parents=True)
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    for name in ("wsgi.py", "app"):
        (checkout / name).symlink_to(ROOT / name)
    return checkout


def start(quickstart: Quickstart, workdir: Path, service: str, site_port: int,
          environment: dict[str, str]) -> RunningQuickstart:
    """Save the path's files, then run its shell blocks as one script, in the background."""
    texts = [*quickstart.shell, *quickstart.files.values()]
    for original in (SERVICE_ADDRESS, SITE_PORT):
        assert any(original in text for text in texts), f"the quickstart no longer uses {original}"
    checkout = checkout_like(workdir)
    for name, text in quickstart.files.items():
        target = (checkout / name).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(addressed(text, service, site_port))
    log = workdir / "quickstart.log"
    env = {**environment, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "HOME": os.environ.get("HOME", str(workdir)), "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONPATH", None)  # the reader's shell has none: `app` is the site's own app.py
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603 (bash, with the README's own blocks)
            ["bash", "-c", addressed(quickstart.script(), service, site_port)], cwd=checkout,
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    return RunningQuickstart(process, log)


def wait_until_serving(running: RunningQuickstart, url: str, timeout: float = 90.0) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            raise AssertionError(f"the quickstart stopped ({running.process.returncode}):\n"
                                 f"{running.output()}")
        try:
            requests.get(url, timeout=2)
            return
        except requests.ConnectionError:
            time.sleep(0.2)
    raise AssertionError(f"the quickstart's site did not answer at {url}:\n{running.output()}")
