"""The admin API's operations in the OpenAPI document: tag `admin`, security `serviceClient`
(OAuth 2 client credentials, with the scope each operation names)."""

from __future__ import annotations

from typing import Any

from app.api import admin_documents as doc
from app.api import admin_schemas as body
from app.api import documents as out
from app.api.operation import Operation, Param
from app.domain.admin.directory import LONGEST_TEXT, SHORTEST_TEXT
from app.domain.admin.pages import MAX_PAGE
from app.domain.clients.service_clients import AdminScope

TAG = "admin"
PREFIX = "/api/admin/v1"
USER_ID = Param("user_id", "path", True, "The account's id (UUID).")
PAGING = (
    Param("limit", description=f"Page size, 1 to {MAX_PAGE} (default 50).",
          schema={"type": "integer", "minimum": 1, "maximum": MAX_PAGE}),
    Param("cursor", description="`next_cursor` of the page before.",
          schema={"type": "string", "maxLength": 512}),
)
TIME = {"type": "string", "format": "date-time"}
SCOPES = {
    AdminScope.USERS_READ: "List, search and read accounts.",
    AdminScope.USERS_WRITE: "Create, rename, disable and enable accounts; clear second "
                            "factors; send password-reset mail; change plans.",
    AdminScope.USERS_PLAN: "Change an account's plan (all that billing needs).",
    AdminScope.SESSIONS_REVOKE: "End every session of an account.",
    AdminScope.AUDIT_READ: "Read an account's audit events.",
}
IDEMPOTENT = ("Every write takes an `Idempotency-Key` header to make a retry safe: a repeat "
              "with the same key, path and body answers the first answer (with "
              "`Idempotent-Replayed: true`) and acts once, also when the two arrive at once "
              "(the second waits for the first); the same key with another body or path is "
              "422 `idempotency_key_reused`, one still being answered 409 "
              "`idempotency_key_in_use`, a malformed key 400 `invalid_idempotency_key`. A "
              "refusal is not kept. Keys are kept a day, per service client.")
UNKNOWN_PLAN = ("422 `unknown_plan` (`errors` points at `#/plan`) when `plan` is not one of the "
                "service's plans (SVC_PLANS, by default free, pro and team); its `detail` "
                "names them.")


def _op(method: str, path: str, operation_id: str, summary: str, scope: AdminScope,
        responses: dict[int, Any], **more: Any) -> Operation:
    if "{user_id}" in path:
        responses = {404: out.Problem, **responses}
    if method != "get":  # a malformed Idempotency-Key; one used for another request or busy
        responses = {400: out.Problem, 409: out.Problem, 422: out.Problem, **responses}
        more["description"] = " ".join(filter(None, (more.get("description"), IDEMPOTENT)))
    return Operation(method, PREFIX + path, operation_id, summary, TAG, responses,
                     admin_scope=scope, **more)


OPERATIONS = (
    _op("get", "/users", "adminListUsers", "List and search accounts", AdminScope.USERS_READ,
        {200: doc.AdminUsersPage, 422: out.Problem},
        params=(Param("q", description=(
                    f"Text in the address, the name or the id, in any case ({SHORTEST_TEXT} to "
                    f"{LONGEST_TEXT} characters): a part of any of them, e.g. a surname or the "
                    "first characters of an id. `%` and `_` are themselves, not wildcards."),
                    schema={"type": "string", "minLength": SHORTEST_TEXT,
                            "maxLength": LONGEST_TEXT}),
                Param("email", description="A prefix of the address."),
                Param("plan"), Param("status", schema={"type": "string",
                                                        "enum": ["active", "disabled"]}),
                Param("created_after", schema=TIME), Param("created_before", schema=TIME),
                *PAGING),
        description="Oldest first, in a stable order: accounts created while a client pages "
                    "through neither repeat nor hide others. The filters combine (all must "
                    "hold); a `q` that is too short or too long is a 422 problem."),
    _op("post", "/users", "adminCreateUser", "Create an account and invite its owner",
        AdminScope.USERS_WRITE, {201: doc.AdminUser, 409: out.Problem, 422: out.Problem},
        body=body.CreateUserBody,
        description="No password goes through the API: the owner gets a mail with a link to "
                    "choose one (valid 7 days). Problems: 409 `email_taken`; " + UNKNOWN_PLAN),
    _op("get", "/users/{user_id}", "adminGetUser", "One account", AdminScope.USERS_READ,
        {200: doc.AdminUserProfile}, params=(USER_ID,)),
    _op("patch", "/users/{user_id}", "adminUpdateUser", "Change an account's name or plan",
        AdminScope.USERS_PLAN, {200: doc.AdminUser, 422: out.Problem}, body=body.UpdateUserBody,
        params=(USER_ID,),
        description="`plan` alone needs `users:plan` (or `users:write`); `full_name` needs "
                    "`users:write`. A new plan shows at once in verify and in the tokens of "
                    "the next refresh; a site that checks access tokens offline sees the old "
                    "plan until the token it holds expires (at most the access tokens' "
                    "lifetime), unless it asks verify. Problems: " + UNKNOWN_PLAN),
    _op("delete", "/users/{user_id}", "adminDeleteUser",
        "Close an account as its owner would", AdminScope.USERS_WRITE,
        {202: doc.AdminUserDeleted}, params=(USER_ID,),
        description="Its sessions end at once and it signs in no more; it is erased after "
                    "`erase_after` (SVC_ACCOUNT_DELETION_GRACE_DAYS), unless the link mailed to "
                    "its owner restores it before."),
    _op("post", "/users/{user_id}/disable", "adminDisableUser",
        "Disable an account: its sessions end at once", AdminScope.USERS_WRITE,
        {200: doc.AdminUser}, params=(USER_ID,)),
    _op("post", "/users/{user_id}/enable", "adminEnableUser", "Enable a disabled account",
        AdminScope.USERS_WRITE, {200: doc.AdminUser}, params=(USER_ID,)),
    _op("delete", "/users/{user_id}/sessions", "adminEndSessions",
        "End every session of an account", AdminScope.SESSIONS_REVOKE,
        {200: doc.SessionsEnded}, params=(USER_ID,)),
    _op("delete", "/users/{user_id}/factors", "adminClearFactors",
        "Remove every second factor (the owner is told by mail)", AdminScope.USERS_WRITE,
        {204: None}, params=(USER_ID,)),
    _op("post", "/users/{user_id}/password-reset", "adminSendPasswordReset",
        "Mail the account a password-reset link", AdminScope.USERS_WRITE, {202: out.Detail},
        params=(USER_ID,)),
    _op("get", "/deliveries", "adminListDeliveries",
        "The latest deliveries of events to client sites", AdminScope.AUDIT_READ,
        {200: doc.AdminDeliveries, 422: out.Problem},
        params=(Param("site"), Param("status", schema={"type": "string", "enum": [
            "pending", "sent", "skipped", "failed"]}), PAGING[0]),
        description="Webhooks and back-channel logout tokens, newest first."),
    _op("post", "/deliveries/retry", "adminRetryDeliveries",
        "Make the waiting deliveries due now", AdminScope.USERS_WRITE,
        {200: doc.DeliveriesDue, 422: out.Problem}, body=body.RetryDeliveriesBody,
        description="With `failed`, the deliveries whose attempts ran out get a fresh set."),
    _op("get", "/users/{user_id}/events", "adminUserEvents", "An account's audit events",
        AdminScope.AUDIT_READ, {200: doc.AdminEventsPage, 422: out.Problem},
        params=(USER_ID, Param("kind", description="Event kinds, comma-separated."),
                Param("since", schema=TIME), Param("until", schema=TIME),
                Param("include_reads", schema={"type": "boolean"},
                      description="Also the reads of operators and service clients."),
                *PAGING),
        description="Newest first; the reads of operators and service clients (recorded "
                    "too) only with `include_reads=true`."),
)


def security_scheme(public_url: str) -> dict[str, Any]:
    return {"type": "oauth2", "description": "A service client's own token (`flask clients "
                                             "add`), from the token endpoint with HTTP Basic.",
            "flows": {"clientCredentials": {"tokenUrl": f"{public_url}/oauth2/token",
                                            "scopes": {str(k): v for k, v in SCOPES.items()}}}}


__all__ = ["OPERATIONS", "security_scheme"]
