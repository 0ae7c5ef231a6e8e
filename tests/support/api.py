"""The JSON API of a real server, with `requests`: what the e2e and production tests send and how
they read problem answers. `server` is anything with `url(path)` (tests/support/server.py's
Gunicorn and its kinds)."""

from __future__ import annotations

import email
import email.policy
import re
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import requests

from tests.support.accounts import PASSWORD
from tests.support.http import TIMEOUT, bearer
from tests.support.server import TRACE_HEADER

PROBLEM_JSON = "application/problem+json"


class Served(Protocol):
    def url(self, path: str) -> str: ...


def new_email(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@example.com"


def post(server: Served, path: str, body: Any = None, *, timeout: float = TIMEOUT,
         **kwargs: Any) -> requests.Response:
    return requests.post(server.url(path), json=body, timeout=timeout, **kwargs)


def get(server: Served, path: str, *, timeout: float = TIMEOUT,
        **kwargs: Any) -> requests.Response:
    return requests.get(server.url(path), timeout=timeout, **kwargs)


def open_mailed_link(server: Served, path: str, *, timeout: float = TIMEOUT) -> requests.Response:
    """A mailed link followed as a person does: its page (which changes nothing), then its
    button, with the page's CSRF token. A dead link's page (no button) is the answer."""
    with requests.Session() as browser:
        page = browser.get(server.url(path), timeout=timeout)
        found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.text)
        if page.status_code != 200 or found is None or 'name="token"' not in page.text:
            return page
        return browser.post(server.url(path), timeout=timeout,
                            data={"csrf_token": found.group(1),
                                  "token": path.split("token=", 1)[1]})


def signup(server: Served, email_address: str, password: str = PASSWORD) -> dict[str, Any]:
    response = post(server, "/api/v2/auth/signup",
                    {"email": email_address, "password": password, "full_name": "Ada"})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def login(server: Served, email_address: str, password: str = PASSWORD) -> requests.Response:
    return post(server, "/api/v2/auth/login", {"email": email_address, "password": password})


def verify(server: Served, access_token: str, trace: str | None = None,
           **kwargs: Any) -> requests.Response:
    """GET /api/v2/auth/verify; `trace` goes in TRACE_HEADER, for the access log."""
    headers = {**bearer(access_token), **kwargs.pop("headers", {})}
    if trace:
        headers[TRACE_HEADER] = trace
    return get(server, "/api/v2/auth/verify", headers=headers, **kwargs)


def refresh(server: Served, refresh_token: str, version: str = "v2") -> requests.Response:
    return post(server, f"/api/{version}/auth/refresh", {"refresh_token": refresh_token})


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    """A problem+json answer with this status and code, a title and a detail, no traceback and no
    HTML; `response` is requests' or the Flask test client's."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == PROBLEM_JSON, response.headers
    body: dict[str, Any] = response.json() if callable(response.json) else response.json
    assert (body["status"], body["code"]) == (status, code), body
    assert body["type"] == "about:blank", body
    assert body["title"] and body["detail"]
    assert "Traceback" not in response.text and "<html" not in response.text.lower()
    return body


def all_at_once(count: int, call: Callable[[int], Any], *,
                return_errors: bool = False) -> list[Any]:
    """Run `call(i)` in `count` threads released together by a barrier; results in order of i.
    An exception a call raises is raised here, or with `return_errors` put in its place."""
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait(timeout=TIMEOUT)
        if not return_errors:
            return call(index)
        try:
            return call(index)
        except Exception as exc:  # noqa: BLE001 (the caller decides what a failure means)
            return exc

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def mailed_links(folder: Path, to: str, path: str) -> list[str]:
    """Every link to `path` (with a token) mailed to `to` as .eml files in `folder` (the
    file:// mail sender), oldest first."""
    links: list[tuple[int, str, str]] = []
    for eml in folder.glob("*.eml") if folder.exists() else []:
        message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
        if message.defects or message["To"] != to:
            continue  # (a defect: a file still being written)
        body = message.get_body(("plain",))  # type: ignore[attr-defined]
        text = body.get_content() if body is not None else ""
        for link in re.findall(r"https?://\S+" + re.escape(path) + r"\?token=[\w-]+", text):
            links.append((eml.stat().st_mtime_ns, eml.name, link))
    return [link for _, _, link in sorted(links)]


def mailed_token(mailbox: Any, to: str, path: str) -> str:
    """The token of the last link to `path` mailed to `to`."""
    return str(mailbox.last_link(to, path).split("token=")[1])
