"""/api/v1: what the client sites already call. Same domain, the v1 response shapes."""

from __future__ import annotations

from flask import Response

from app.api.logins import sign_in_without_second_step
from app.api.schemas import RefreshBody, V1LoginBody, parse_body
from app.api.shaping import login_json, no_store, token_fields
from app.domain.sessions import sessions
from app.web import ratelimits
from app.web.client import client_info
from app.web.errors import problem_blueprint

bp = problem_blueprint("api_v1", "/api/v1")


@bp.post("/auth/login")
@ratelimits.login
def login() -> Response:
    body = parse_body(V1LoginBody)
    issued = sign_in_without_second_step(body.email, body.password, body.captcha_token)
    # Older clients read the tokens under `session`; newer ones at the top level.
    return no_store({**login_json(issued), "session": token_fields(issued)})


@bp.post("/auth/refresh")
@ratelimits.refresh
def refresh() -> Response:
    body = parse_body(RefreshBody)
    return no_store(token_fields(sessions.refresh(body.refresh_token, client_info())))
