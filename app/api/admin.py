"""/api/admin/v1: accounts for service clients (billing, support scripts), with a token of
their own (client_credentials) and the scope each endpoint names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from flask import Response, g, request

from app.api.admin_schemas import (
    CreateUserBody,
    DeliveriesQuery,
    EventsQuery,
    RetryDeliveriesBody,
    UpdateUserBody,
    UsersQuery,
    parse_query,
)
from app.api.admin_shaping import (
    admin_user_json,
    deliveries_json,
    events_page_json,
    profile_json,
    users_page_json,
)
from app.api.schemas import parse_body
from app.api.shaping import no_store
from app.domain import audit, deliveries
from app.domain.admin import actions, activity, directory, idempotency
from app.domain.admin.idempotency import Answer
from app.domain.audit import ClientInfo
from app.domain.clients.service_clients import AdminScope, authenticate
from app.domain.lifecycle import leaving
from app.web import ratelimits
from app.web.bearer import bearer_token
from app.web.client import client_info
from app.web.errors import problem_blueprint

bp = problem_blueprint("api_admin", "/api/admin/v1")


def _caller(needed: AdminScope, *or_: AdminScope) -> ClientInfo:
    """Who calls, if its token holds `needed` (or one of `or_`); kept for the audit of the
    call (below)."""
    service = authenticate(bearer_token(), needed, *or_)
    by = replace(client_info(), actor=f"client:{service.client_id}")
    g.admin_caller = by
    return by


@bp.after_request
def _audit_call(response: Response) -> Response:
    """Every call a service client made, reads too, with the client as the actor."""
    by = g.pop("admin_caller", None)
    if by is not None and request.endpoint:
        untrusted_id = (request.view_args or {}).get("user_id")
        known = response.status_code < 400 and untrusted_id is not None
        audit.record_alone(f"admin_api:{request.endpoint.rsplit('.', 1)[-1]}", by,
                           user_id=untrusted_id if known else None)
    return response


def _once(by: ClientInfo, act: Callable[[], Answer]) -> Response:
    """A write's answer; with an Idempotency-Key, the first answer to that key and request."""
    untrusted_key = request.headers.get("Idempotency-Key")
    if untrusted_key is None:
        answer, replayed = act(), False
    else:
        answer, replayed = idempotency.answer_once(
            str(by.actor), idempotency.check_key(untrusted_key),
            idempotency.request_hash(request.method, request.path, request.get_data()), act)
    response = no_store(answer.body or {}, answer.status)
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@bp.get("/users")
@ratelimits.admin
def list_users() -> Response:
    _caller(AdminScope.USERS_READ)
    query = parse_query(UsersQuery)
    page = directory.search_users(
        directory.Search(query.email, query.plan, query.status, query.created_after,
                         query.created_before, text=query.q), query.limit, query.cursor)
    return no_store(users_page_json(page))


@bp.post("/users")
@ratelimits.admin
def create_user() -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    body = parse_body(CreateUserBody)
    return _once(by, lambda: Answer(201, admin_user_json(
        actions.create_invited(body.email, body.full_name, body.plan, by))))


@bp.get("/users/<user_id>")
@ratelimits.admin
def show_user(user_id: str) -> Response:
    _caller(AdminScope.USERS_READ)
    return no_store(profile_json(directory.profile(directory.require_user(user_id))))


@bp.patch("/users/<user_id>")
@ratelimits.admin
def update_user(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_PLAN, AdminScope.USERS_WRITE)
    body = parse_body(UpdateUserBody)
    if body.full_name is not None:  # billing's scope changes the plan only
        by = _caller(AdminScope.USERS_WRITE)
    user = actions.update(directory.require_user(user_id), by, full_name=body.full_name,
                          plan=body.plan)
    return no_store(admin_user_json(user))


@bp.delete("/users/<user_id>")
@ratelimits.admin
def delete_user(user_id: str) -> tuple[Response, int]:
    by = _caller(AdminScope.USERS_WRITE)
    user = actions.delete(directory.require_user(user_id), by)
    return no_store({**admin_user_json(user), "erase_after": leaving.erase_after(user)}), 202


@bp.post("/users/<user_id>/disable")
@ratelimits.admin
def disable_user(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    return _once(by, lambda: Answer(200, admin_user_json(
        actions.disable(directory.require_user(user_id), by))))


@bp.post("/users/<user_id>/enable")
@ratelimits.admin
def enable_user(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    return _once(by, lambda: Answer(200, admin_user_json(
        actions.enable(directory.require_user(user_id), by))))


@bp.delete("/users/<user_id>/sessions")
@ratelimits.admin
def end_sessions(user_id: str) -> Response:
    by = _caller(AdminScope.SESSIONS_REVOKE)
    ended = actions.end_sessions(directory.require_user(user_id), by)
    return no_store({"sessions_ended": ended})


@bp.delete("/users/<user_id>/factors")
@ratelimits.admin
def clear_factors(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    actions.clear_second_factors(directory.require_user(user_id), by)
    return Response(status=204)


@bp.post("/users/<user_id>/password-reset")
@ratelimits.admin
def send_password_reset(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    return _once(by, lambda: Answer(202, _reset(user_id, by)))


def _reset(user_id: str, by: ClientInfo) -> dict[str, str]:
    actions.send_password_reset(directory.require_user(user_id), by)
    return {"detail": "A password-reset link is on its way to the account's address."}


@bp.get("/deliveries")
@ratelimits.admin
def list_deliveries() -> Response:
    _caller(AdminScope.AUDIT_READ)
    query = parse_query(DeliveriesQuery)
    return no_store(deliveries_json(deliveries.recent(query.site, query.status,
                                                      query.limit or 50)))


@bp.post("/deliveries/retry")
@ratelimits.admin
def retry_deliveries() -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    body = parse_body(RetryDeliveriesBody)
    return _once(by, lambda: Answer(200, {"due": deliveries.retry(failed=body.failed,
                                                                  site=body.site)}))


@bp.get("/users/<user_id>/events")
@ratelimits.admin
def user_events(user_id: str) -> Response:
    _caller(AdminScope.AUDIT_READ)
    query = parse_query(EventsQuery)
    kinds = tuple(k for k in (query.kind or "").split(",") if k)
    page = activity.account_events(
        directory.require_user(user_id).id,
        activity.EventFilter(kinds, query.since, query.until), query.limit, query.cursor)
    return no_store(events_page_json(page))
