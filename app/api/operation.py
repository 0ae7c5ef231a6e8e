"""An operation of the OpenAPI document, as the document's modules list them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from app.api import documents as out


class Answer(StrEnum):
    """A response with no JSON model: a redirect (a Location header) or an HTML page."""

    REDIRECT = "redirect"
    PAGE = "page"


@dataclass(frozen=True)
class Param:
    name: str
    where: str = "query"
    required: bool = False
    description: str = ""
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    responses: dict[int, type[BaseModel] | Answer | None]  # a model, an Answer, or no body
    body: type[BaseModel] | None = None
    bearer: bool = False
    params: tuple[Param, ...] = ()
    links: dict[int, dict[str, Any]] = field(default_factory=dict)
    # The OpenID Connect endpoints: a form body, client authentication, RFC 6749 errors.
    form: type[BaseModel] | None = None
    client_auth: bool = False
    errors: type[BaseModel] = out.Problem
    description: str = ""
    admin_scope: str | None = None  # the admin API: a service client's token with this scope
