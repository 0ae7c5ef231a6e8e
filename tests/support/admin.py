"""Service clients of the admin API, and their tokens, for tests."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from app.domain.clients import service_clients


def register(app: Flask, name: str, *scopes: str) -> tuple[str, str]:
    """A service client with these scopes: (client_id, client_secret)."""
    with app.app_context():
        registered = service_clients.add(name, list(scopes))
    return registered.service.client_id, registered.client_secret


def printed_credentials(output: str) -> tuple[str, str]:
    """(client_id, client_secret) from what `flask clients add` prints once."""
    printed = dict(line.split(" ", 1) for line in output.splitlines()
                   if line.startswith(("client_id ", "client_secret ")))
    return printed["client_id"], printed["client_secret"]


def token(client: FlaskClient, credentials: tuple[str, str], scope: str | None = None) -> str:
    data = {"grant_type": "client_credentials", **({"scope": scope} if scope else {})}
    response = client.post("/oauth2/token", data=data, auth=credentials)
    assert response.status_code == 200, response.get_json()
    found: str = response.get_json()["access_token"]
    return found


def authorized(access_token: str, **headers: str) -> dict[str, Any]:
    """A request's keyword arguments that carry `access_token` (and `headers`)."""
    return {"headers": {"Authorization": f"Bearer {access_token}", **headers}}
