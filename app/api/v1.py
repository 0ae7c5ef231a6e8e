"""/api/v1: what the client sites already call. Same domain, the v1 response shapes."""

from __future__ import annotations

from flask import Blueprint, Response

from app.api import ratelimits
from app.api.problems import register_api_errors
from app.api.schemas import RefreshBody, V1LoginBody, parse_body
from app.api.shaping import client_info, login_json, no_store, token_fields
from app.domain import accounts, sessions

bp = Blueprint("api_v1", __name__, url_prefix="/api/v1")
register_api_errors(bp)


@bp.post("/auth/login")
@ratelimits.login
def login() -> Response:
    body = parse_body(V1LoginBody)
    issued = accounts.log_in(body.email, body.password, client_info())
    # Older clients read the tokens under `session`; newer ones at the top level.
    return no_store({**login_json(issued), "session": token_fields(issued)})


@bp.post("/auth/refresh")
@ratelimits.refresh
def refresh() -> Response:
    body = parse_body(RefreshBody)
    return no_store(token_fields(sessions.refresh(body.refresh_token, client_info())))
