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
from app.api.shaping import NO_STORE, no_store
from app.domain import deliveries
from app.domain.admin import actions, activity, directory, idempotency
from app.domain.admin.idempotency import Answer
from app.domain.audit import ClientInfo, ViewFamily, of_view
from app.domain.clients.service_clients import AdminScope, authenticate, caller_of
from app.domain.lifecycle import leaving
from app.domain.tokens.errors import InsufficientScope
from app.web import ratelimits, trail
from app.web.bearer import bearer_token
from app.web.client import client_info
from app.web.errors import dependency_problem, problem_blueprint

bp = problem_blueprint("api_admin", "/api/admin/v1")


def _caller(needed: AdminScope, *or_: AdminScope) -> ClientInfo:
    """Who calls, if its token holds `needed` (or one of `or_`); kept for the audit of the
    call (below), a call refused for its scope too."""
    untrusted_token = bearer_token()
    try:
        service = authenticate(untrusted_token, needed, *or_)
    except InsufficientScope:
        g.admin_caller = replace(client_info(), actor=f"client:{caller_of(untrusted_token)}")
        g.admin_refused = True
        raise
    by = replace(client_info(), actor=f"client:{service.client_id}")
    g.admin_caller = by
    return by


@bp.after_request
def _audit_call(response: Response) -> Response:
    """Every call a service client made, reads too (one event per account a read showed), with
    the client as the actor; a refused one as `admin_api_refused:<endpoint>`."""
    by = g.pop("admin_caller", None)
    if by is None or not request.endpoint:
        return response
    endpoint = request.endpoint.rsplit(".", 1)[-1]
    if g.pop("admin_refused", False):
        trail.trace(of_view(ViewFamily.ADMIN_API_REFUSED, endpoint), by, [None], read=False)
        return response
    succeeded = response.status_code < 400
    if request.method == "GET":
        read = trail.accounts_read() if succeeded else [None]
        if not trail.trace(of_view(ViewFamily.ADMIN_API, endpoint), by, read,
                           read=True) and succeeded:
            return dependency_problem()
        return response
    untrusted_id = (request.view_args or {}).get("user_id")
    # What a change changed is audited in its own transaction (app/domain/admin/actions.py);
    # this is the call, kept if the database takes it (app/web/trail.py).
    trail.trace(of_view(ViewFamily.ADMIN_API, endpoint), by,
                [untrusted_id if succeeded else None], read=False)
    return response


def _once(by: ClientInfo, act: Callable[[], Answer]) -> Response:
    """A write's answer; with an Idempotency-Key, the first answer to that key and request.
    Every write goes through here, so that no key is ever ignored."""
    untrusted_key = request.headers.get("Idempotency-Key")
    if untrusted_key is None:
        answer, replayed = act(), False
    else:
        answer, replayed = idempotency.answer_once(
            str(by.actor), idempotency.check_key(untrusted_key),
            idempotency.request_hash(request.method, request.path, request.get_data()), act)
    response = (no_store(answer.body, answer.status) if answer.body is not None
                else Response(status=answer.status, headers=NO_STORE))
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
    trail.saw([user.id for user in page.items])
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
    return _once(by, lambda: Answer(200, admin_user_json(actions.update(
        directory.require_user(user_id), by, full_name=body.full_name, plan=body.plan))))


@bp.delete("/users/<user_id>")
@ratelimits.admin
def delete_user(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    return _once(by, lambda: Answer(202, _deleted(user_id, by)))


def _deleted(user_id: str, by: ClientInfo) -> dict[str, object]:
    user = actions.delete(directory.require_user(user_id), by)
    return {**admin_user_json(user), "erase_after": leaving.erase_after(user)}


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
    return _once(by, lambda: Answer(200, {"sessions_ended": actions.end_sessions(
        directory.require_user(user_id), by)}))


@bp.delete("/users/<user_id>/factors")
@ratelimits.admin
def clear_factors(user_id: str) -> Response:
    by = _caller(AdminScope.USERS_WRITE)
    return _once(by, lambda: _factors_cleared(user_id, by))


def _factors_cleared(user_id: str, by: ClientInfo) -> Answer:
    actions.clear_second_factors(directory.require_user(user_id), by)
    return Answer(204, None)


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
        activity.EventFilter(kinds, query.since, query.until, query.include_reads), query.limit,
        query.cursor)
    return no_store(events_page_json(page))
