"""The admin API's request bodies and query strings: strict, no unknown fields."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

from flask import request
from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from app.api.schemas import Body, Email, Text, error_pointers
from app.domain.accounts import plans
from app.domain.admin.directory import LONGEST_TEXT, SHORTEST_TEXT, Status
from app.domain.admin.pages import MAX_PAGE
from app.domain.errors import InvalidQuery

FullName = Annotated[Text, Field(max_length=200)]
Plan = Annotated[Text, Field(min_length=1, max_length=32, pattern=plans.PLAN.pattern,
                             description="A plan name: lower-case letters, digits, - and _; "
                                         "one of the service's plans when it lists them.")]
Cursor = Annotated[Text, Field(max_length=512, description="`next_cursor` of the page before.")]
Limit = Annotated[int, Field(ge=1, le=MAX_PAGE, description=f"Page size, 1 to {MAX_PAGE} "
                                                             "(default 50).")]


def _iso_8601(value: Any) -> Any:
    """A date-time as RFC 3339 writes it, not a number of seconds pydantic would take too."""
    if not isinstance(value, str) or not re.match(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}", value):
        raise ValueError("An ISO 8601 date and time with its offset, e.g. "
                         "2026-01-31T12:00:00Z.")
    return value


Time = Annotated[AwareDatetime, BeforeValidator(_iso_8601),
                 Field(description="ISO 8601, with its offset.")]


class CreateUserBody(Body):
    """A new account with no password: its owner gets a mail with a link to choose one."""

    email: Email
    full_name: FullName = ""
    plan: Plan | None = Field(None, description="Default: the service's default plan (`free` "
                                                "unless its operator chose another).")


class UpdateUserBody(Body):
    """`plan` needs `users:plan` (or `users:write`), `full_name` needs `users:write`."""

    full_name: FullName | None = None
    plan: Plan | None = None

    @model_validator(mode="after")
    def _something(self) -> UpdateUserBody:
        if self.full_name is None and self.plan is None:
            raise ValueError("Send full_name, plan or both.")
        return self


class Query(BaseModel):
    """A query string: values are text, converted (not coerced from JSON), no unknown names."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class UsersQuery(Query):
    email: Annotated[Text, Field(max_length=320, description="A prefix of the address.")] \
        | None = None
    q: Annotated[Text, Field(
        min_length=SHORTEST_TEXT, max_length=LONGEST_TEXT,
        description=f"Text in the address, the name or the id, in any case: a part of any of "
                    f"them ({SHORTEST_TEXT} to {LONGEST_TEXT} characters; % and _ are "
                    f"themselves, not wildcards).")] | None = None
    plan: Plan | None = None
    status: Status | None = None
    created_after: Time | None = None
    created_before: Time | None = None
    limit: Limit | None = None
    cursor: Cursor | None = None


class EventsQuery(Query):
    kind: Annotated[Text, Field(max_length=400, description="Event kinds, comma-separated.")] \
        | None = None
    since: Time | None = None
    until: Time | None = None
    include_reads: Annotated[bool, Field(description="Also the reads of operators and "
                                                     "service clients (left out by default).")] \
        = False
    limit: Limit | None = None
    cursor: Cursor | None = None


class DeliveriesQuery(Query):
    site: Annotated[Text, Field(max_length=64)] | None = None
    status: Literal["pending", "sent", "skipped", "failed"] | None = None
    limit: Limit | None = None


class RetryDeliveriesBody(Body):
    """Deliveries waiting for a retry are due now; with `failed`, the failed ones too."""

    failed: bool = False
    site: Annotated[Text, Field(max_length=64)] | None = None


Q = TypeVar("Q", bound=Query)


def parse_query(model: type[Q]) -> Q:
    """The query string as `model` (each name once), or InvalidQuery saying what is wrong."""
    data: dict[str, Any] = {}
    for name, values in request.args.lists():
        if len(values) != 1:
            raise InvalidQuery(errors=[{"pointer": f"#/{name[:64]}",
                                        "detail": "Give it once."}])
        data[name] = values[0]
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidQuery(errors=error_pointers(error)) from None


__all__ = ["Body", "CreateUserBody", "DeliveriesQuery", "EventsQuery", "RetryDeliveriesBody",
           "UpdateUserBody", "UsersQuery", "parse_query"]
