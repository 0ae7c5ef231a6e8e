"""The headers added to every response (app/response_headers.py)."""

from __future__ import annotations

from flask import Response

from app.web.headers import CONTENT_SECURITY_POLICY, add_security_headers, add_vary


def test_every_security_header_is_added_once() -> None:
    response = Response("{}", mimetype="application/json")
    add_security_headers(add_security_headers(response))
    for name in ("X-Content-Type-Options", "Referrer-Policy", "Content-Security-Policy",
                 "Cross-Origin-Opener-Policy", "Strict-Transport-Security"):
        assert len(response.headers.getlist(name)) == 1, name
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "Cache-Control" not in response.headers  # JSON views choose their own caching


def test_a_view_s_own_header_wins_whatever_its_case() -> None:
    response = Response("x", headers={"content-security-policy": "default-src 'self'"})
    add_security_headers(response)
    assert response.headers.getlist("Content-Security-Policy") == ["default-src 'self'"]


def test_html_is_never_stored_unless_the_view_says_otherwise() -> None:
    assert add_security_headers(Response("<p>", mimetype="text/html")).headers[
        "Cache-Control"] == "no-store"
    public = Response("<p>", mimetype="text/html", headers={"Cache-Control": "max-age=60"})
    assert add_security_headers(public).headers.getlist("Cache-Control") == ["max-age=60"]


def test_vary_fields_are_added_once_each() -> None:
    response = Response("x")
    add_vary(response, "Origin")
    add_vary(response, "origin")
    add_vary(response, "Cookie")
    add_vary(response, "Cookie")
    assert response.headers.getlist("Vary") == ["Origin, Cookie"]
