"""Signing in through the API with a captcha token, and counting failures until one is asked for."""

from __future__ import annotations

V1, V2 = "/api/v1/auth/login", "/api/v2/auth/login"


def login(client, email, password, token=None, endpoint=V2, ip="127.0.0.1"):
    body = {"email": email, "password": password}
    if token is not None:
        body["captcha_token"] = token
    return client.post(endpoint, json=body, environ_base={"REMOTE_ADDR": ip})


def answers_until_asked(client, email, ip="127.0.0.1", most=10):
    """How many wrong passwords are answered 401 before a captcha is asked for."""
    for failures in range(most):
        response = login(client, email, "wrong password", "", ip=ip)
        if response.status_code == 422:
            assert response.get_json()["code"] == "captcha_required"
            return failures
        assert response.status_code == 401
    raise AssertionError("never asked")
