"""`make run` on a port something else holds says so and stops, before it installs anything or
prints that it serves (issue 36: it printed "serving" and then gunicorn failed)."""

from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from tests.support.server import ROOT

pytestmark = pytest.mark.e2e


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_on_a_busy_port_says_so() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(["make", "--no-print-directory", "run", f"PORT={port}"],
                                cwd=ROOT, capture_output=True, text=True, timeout=60,
                                check=False)
    assert result.returncode != 0
    assert f"Port {port} on 127.0.0.1 is in use" in result.stdout
    assert "make run PORT=" in result.stdout
    assert "serving" not in result.stdout + result.stderr
