"""The cookie session (app/cookie_session.py) skips Flask's work on requests that bring no
cookie and leave the session empty, and otherwise answers exactly as Flask's own would."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.sessions import SecureCookieSessionInterface

from tests.support.pages import csrf_token

pytestmark = pytest.mark.app_settings("pages")

# The two journeys may straddle a second: an Expires date is the clock's, Max-Age is the rule.
EXPIRES = re.compile(r"Expires=[^;]+")


def session_headers(response: Any) -> tuple[Any, ...]:
    """What the session decides about a response: its cookies (without their signed values,
    which carry a timestamp) and its Vary header."""
    cookies = sorted(EXPIRES.sub("Expires=<date>", header.split("=", 1)[0] + ";"
                                 + header.split(";", 1)[-1])
                     for header in response.headers.getlist("Set-Cookie"))
    vary = sorted(field.strip() for field in response.headers.get("Vary", "").split(",") if field)
    return response.status_code, tuple(cookies), tuple(vary)


def journey(client: Any, user: Any) -> list[tuple[Any, ...]]:
    """An API call, then a browser that signs in, looks at its account and signs out."""
    seen = [session_headers(client.get("/api/v2/auth/verify")),
            session_headers(client.get("/.well-known/jwks.json"))]
    token = csrf_token(client, "/login")
    seen.append(session_headers(client.post(
        "/login", data={"csrf_token": token, "email": user.email, "password": user.password})))
    seen.append(session_headers(client.get("/account")))
    seen.append(session_headers(client.post("/logout", data={"csrf_token": csrf_token(
        client, "/account")})))
    seen.append(session_headers(client.get("/api/v2/auth/verify")))
    return seen


def test_the_session_cookies_are_the_ones_flask_would_set(app: Any, user: Any) -> None:
    ours = journey(app.test_client(), user)
    app.session_interface = SecureCookieSessionInterface()
    flasks = journey(app.test_client(), user)
    assert ours == flasks
    assert any(cookies for _, cookies, _ in ours), "the journey set no cookie at all"


def test_an_api_call_without_a_cookie_sets_none(client: Any) -> None:
    response = client.get("/api/v2/auth/verify")
    assert response.status_code == 401
    assert "Set-Cookie" not in response.headers


def test_a_forged_cookie_is_an_empty_session(client: Any) -> None:
    client.set_cookie("svc_session", "eyJfdXNlcl9pZCI6ImFkbWluIn0.forged.signature")
    response = client.get("/account")
    assert response.status_code == 302 and response.headers["Location"].startswith("/login")
