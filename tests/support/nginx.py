"""The shipped nginx configuration (deploy/nginx/svc-auth.conf, which the deployment guide
includes; Debian's nginx, run from a work folder) in front of gunicorn servers on 127.0.0.1:
tests/system/e2e/test_slow_clients.py (slow clients) and bench/production.py (two instances behind
one
address) run the very configuration the guide shows.

`nginx_config` keeps the example as it is but for where it listens (plain HTTP on 127.0.0.1,
without its ssl_ lines: no certificate here), its upstream servers and its access log, inside the
few lines a whole nginx.conf needs around it; several sites (one `server` each, on its own port
and upstream) can share one nginx, so that two upstreams are measured behind the same front.
`start_nginx` runs it and waits until every site answers.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.http import status_of
from tests.support.server import ROOT
from tests.support.servers import INSTALL_HINT, free_port


class NginxError(RuntimeError):
    """nginx is not installed, or did not start; the message carries its log."""


SHIPPED_CONFIG = ROOT / "deploy" / "nginx" / "svc-auth.conf"


def documented_nginx_example() -> str:
    """The shipped file, which the deployment guide includes."""
    return SHIPPED_CONFIG.read_text()


def nginx_binary() -> str:
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if found is None:
        raise NginxError(f"nginx not found: {INSTALL_HINT}")
    return found


@dataclass(frozen=True)
class Site:
    """One `server` of the example: where it listens, and the gunicorn addresses behind it."""

    port: int
    upstreams: tuple[str, ...]  # "127.0.0.1:PORT" each

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _site(example: str, index: int, site: Site, workdir: Path) -> str:
    name = f"svc_auth_{index}"
    servers = " ".join(f"server {address};" for address in site.upstreams)
    text = re.sub(r"listen [^;]*;", f"listen 127.0.0.1:{site.port};", example)
    text = re.sub(r"^\s*ssl_.*;\n", "", text, flags=re.MULTILINE)  # no certificate here
    text = re.sub(r"upstream svc_auth \{[^}]*\}", f"upstream {name} {{ {servers} }}", text)
    text = text.replace("http://svc_auth;", f"http://{name};")
    text = re.sub(r"access_log \S+", f"access_log {workdir / f'access-{index}.log'}", text)
    if index:  # one log_format per nginx.conf: the first site's
        text = re.sub(r"^log_format .*?;\n", "", text, flags=re.MULTILINE | re.DOTALL)
    return text


def nginx_config(workdir: Path, sites: list[Site], worker_processes: int | str = 1) -> str:
    """The guide's example once per site, in a whole nginx.conf."""
    example = documented_nginx_example()
    temp_paths = "\n".join(f"    {kind}_temp_path {workdir / kind};"
                           for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    # As root, nginx would hand its workers to "nobody", who cannot enter the work folder.
    user = "user root;" if os.geteuid() == 0 else ""
    body = "\n".join(_site(example, i, site, workdir) for i, site in enumerate(sites))
    return f"""{user}
daemon off;
worker_processes {worker_processes};
pid {workdir / 'nginx.pid'};
error_log {workdir / 'error.log'} info;
events {{ worker_connections 1024; }}
http {{
{temp_paths}
{body}
}}
"""


@dataclass
class Nginx:
    process: subprocess.Popen[bytes]
    workdir: Path
    sites: list[Site]

    def pids(self) -> list[int]:
        """The master and its workers."""
        children: list[int] = []
        for task in Path(f"/proc/{self.process.pid}/task").glob("*/children"):
            try:
                children.extend(int(pid) for pid in task.read_text().split())
            except OSError:
                continue
        return [self.process.pid, *children]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # nginx: graceful shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start_nginx(workdir: Path, upstreams: list[list[str]], *, path: str = "/health",
                worker_processes: int | str = 1, timeout: float = 60.0) -> Nginx:
    """nginx with one site per list of upstream addresses, each on a free port of 127.0.0.1;
    once GET `path` answers on every site (any status: the upstream decides)."""
    workdir.mkdir(parents=True, exist_ok=True)
    sites = [Site(free_port(), tuple(addresses)) for addresses in upstreams]
    config = workdir / "nginx.conf"
    config.write_text(nginx_config(workdir, sites, worker_processes))
    process = subprocess.Popen(
        [nginx_binary(), "-p", str(workdir), "-c", str(config), "-e", str(workdir / "error.log")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nginx = Nginx(process, workdir, sites)
    deadline = time.monotonic() + timeout
    while not all(status_of(site.base_url + path, 1.0) is not None for site in sites):
        code = process.poll()
        if code is not None or time.monotonic() > deadline:
            nginx.stop()
            why = (f"exited with code {code}" if code is not None
                   else f"did not answer GET {path} on every site within {timeout:.0f} s")
            log = workdir / "error.log"
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else "(no error log)"
            raise NginxError(f"nginx {why}; its error log {log}:\n{tail}")
        time.sleep(0.1)
    return nginx
