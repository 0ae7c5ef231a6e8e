"""Fixtures any test may use (a pytest plugin: tests/conftest.py), and the settings a module
starts from when it is marked `app_settings(subject)` (tests/conftest.py's `settings`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.apps import build_app, dispose_app
from tests.support.events import events_settings
from tests.support.oidc import SITES as OIDC_SITES
from tests.support.pages import submit
from tests.support.sites import OAUTH_SITES, PAGE_SITES, PROVIDERS


def subject_settings(subject: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings of a subject's tests: `oauth` (a client site, providers on), `oidc` (the
    OpenID Connect client sites), `pages` (the hosted pages' sites, GitHub on), `events` (sites
    whose webhooks reach this test's `receiver`)."""
    if subject == "oauth":
        return {"CLIENT_SITES": OAUTH_SITES, **PROVIDERS}
    if subject == "oidc":
        return {"CLIENT_SITES": OIDC_SITES}
    if subject == "pages":
        return {"CLIENT_SITES": PAGE_SITES, "GITHUB_CLIENT_ID": "id",
                "GITHUB_CLIENT_SECRET": "secret"}
    if subject == "events":
        return events_settings(request.getfixturevalue("receiver"))
    raise ValueError(f"app_settings: unknown subject {subject!r}")


@pytest.fixture
def signed_in(client, user):  # type: ignore[no-untyped-def]
    """A browser signed in to the service as `user`."""
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    return client


@pytest.fixture
def next_app(tmp_path, clock, settings, database_url):
    """Another process of the service on the same database: a restarted worker, or another
    instance."""
    apps = []

    def start():  # type: ignore[no-untyped-def]
        apps.append(build_app(tmp_path / f"next-{len(apps)}", clock, settings, database_url))
        return apps[-1]

    yield start
    for app in apps:
        dispose_app(app)
