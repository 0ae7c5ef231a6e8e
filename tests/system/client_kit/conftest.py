"""Fixtures of the client-kit tests.

Their helpers are in tests/support/client_kit.py: it puts `clients/python` on sys.path, so
`svc_auth_client` imports without being installed, and `site_module()` loads
examples/client_site/app.py by file path (the service already owns the package name `app`).

- `kit` (session): one real svc-auth (tests/support/sqlite_server.py's `start_server`, 2
  gunicorn workers, rate limits off) and two example sites, `symbols` and `footprints`, each
  on its own port with werkzeug's server in a thread. The sites' origins and callback URIs are
  registered in the service's SVC_CLIENT_SITES, so the service's CORS answers them.
- `browser_thread` (session): Debian's Chromium driven by Playwright's sync API in a thread of
  its own. Another sync Playwright (tests/system/browser's session fixture) may already be running
  in
  the main thread, and two cannot share one thread; here every browser scenario is a function
  `run(fn)` hands to that thread, and whatever it raises is raised again in the test.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM
from tests.support.client_kit import (
    SITE_NAMES,
    BrowserThread,
    Kit,
    bind_site,
    site_module,
)
from tests.support.sqlite_server import Server, service_env, start_server


@pytest.fixture(scope="session")
def kit() -> Iterator[Kit]:
    workdir = Path(tempfile.mkdtemp(prefix="svc-client-kit-"))
    sites = {name: bind_site(name) for name in SITE_NAMES}
    service: Server | None = None
    try:
        # Each site's handoff callback first (v1's target), then its OpenID Connect mode's.
        registry = {name: {"redirect_uris": [site.callback, site.url("/oidc/callback")],
                           "post_logout_redirect_uris": [site.url("/oidc")],
                           "origins": [site.base_url]}
                    for name, site in sites.items()}
        service = start_server(workdir / "server",
                               {"SVC_CLIENT_SITES": json.dumps(registry)}, workers=2)
        module = site_module()
        for name, site in sites.items():
            site.slot.app = module.create_app(name, service.base_url, site.pricing_url)
            site.thread.start()
        yield Kit(service, sites, service_env(service))
    finally:
        for site in sites.values():
            if site.thread.is_alive():
                site.stop()
            else:
                site.server.server_close()
        if service is not None:
            service.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def browser_thread() -> Iterator[BrowserThread]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's package (apt-get install -y chromium)"
                    " or run scripts/install-test-tools")
    running = BrowserThread()
    try:
        yield running
    finally:
        running.close()
