"""The admin API's response bodies (the OpenAPI document's schemas; the contract tests check
every real answer against them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from app.api.documents import Document


class AdminUser(Document):
    id: str = Field(description="UUID")
    email: str
    full_name: str
    plan: str
    status: Literal["active", "disabled"]
    email_verified: bool
    created_at: str = Field(description="ISO 8601, UTC")
    disabled_at: str | None


class AdminUserDeleted(AdminUser):
    erase_after: str = Field(description="ISO 8601")


class SecondFactors(Document):
    totp: int = Field(description="1 with an authenticator app, else 0.")
    passkey: int
    recovery_codes_left: int


class AdminUserProfile(AdminUser):
    """One account as support sees it: never a hash, a key, a code or a token."""

    operator: bool = Field(description="May use the support console.")
    providers: list[str] = Field(description="Linked sign-in providers.")
    second_factors: SecondFactors
    passkeys: int
    open_sessions: int
    last_sign_in_at: str | None


class AdminUsersPage(Document):
    users: list[AdminUser]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on "
                                                "the last.")


class AuditChange(Document):
    before: Any
    after: Any


class AdminEvent(Document):
    id: int
    at: str
    event: str
    actor: str | None = Field(description="Who acted when not the account's owner: "
                                          "`client:<name>`, `operator:<account id>`, `cli`.")
    actor_email: str | None = Field(description="An operator's address when they acted.")
    read: bool = Field(description="An operator or a service client looked, and changed "
                                   "nothing (listed with `include_reads=true` only).")
    changes: dict[str, AuditChange] | None = Field(
        description="What a change changed, field by field; never a secret.")
    session_id: str | None
    ip: str | None
    user_agent: str | None


class AdminEventsPage(Document):
    events: list[AdminEvent] = Field(description="Newest first by `at`, then by `id`.")
    next_cursor: str | None


class SessionsEnded(Document):
    sessions_ended: int


class AdminDelivery(Document):
    id: str
    event_id: str = Field(description="The webhook-id of every attempt.")
    event_type: str | None
    site: str
    kind: Literal["webhook", "backchannel_logout"]
    status: Literal["pending", "sent", "skipped", "failed"]
    attempts: int
    next_attempt_at: str | None = Field(description="When pending.")
    last_error: str | None
    created_at: str


class AdminDeliveries(Document):
    deliveries: list[AdminDelivery] = Field(description="Newest first.")


class DeliveriesDue(Document):
    due: int
