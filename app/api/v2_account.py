"""/api/v2: the account's own life: a new address, leaving, and its data."""

from __future__ import annotations

from flask import Response

from app.api.schemas import EmailChangeBody, LeaveBody, parse_body
from app.api.shaping import no_store
from app.api.v2 import bp
from app.domain.lifecycle import address_change, export, leaving, proof
from app.web import ratelimits
from app.web.bearer import current_bearer
from app.web.client import client_info

EMAIL_CHANGE_ANSWER = {"detail": "A link is on its way to the new address: the address changes "
                                 "when it is opened."}


@bp.post("/auth/email")
@ratelimits.account_change
def change_email() -> tuple[Response, int]:
    bearer, body, client = current_bearer(), parse_body(EmailChangeBody), client_info()
    user = proof.proved_owner(bearer.session_id, bearer.account.id, client,
                              password=body.password, code=body.code)
    address_change.request_change(user, body.new_email, client)
    return no_store(EMAIL_CHANGE_ANSWER), 202


@bp.delete("/auth/account")
@ratelimits.account_change
def leave() -> tuple[Response, int]:
    bearer, body, client = current_bearer(), parse_body(LeaveBody), client_info()
    user = proof.proved_owner(bearer.session_id, bearer.account.id, client,
                              password=body.password, code=body.code)
    leaving.schedule_deletion(user, client)
    return no_store({"detail": "The account is closed. A link to restore it is on its way.",
                     "erase_after": leaving.erase_after(user)}), 202


@bp.get("/auth/account/export")
@ratelimits.export
def export_account() -> Response:
    bearer, client = current_bearer(), client_info()
    user = proof.live_owner(bearer.session_id, bearer.account.id)
    response = no_store(export.export(user, client))
    response.headers["Content-Disposition"] = 'attachment; filename="account.json"'
    return response
