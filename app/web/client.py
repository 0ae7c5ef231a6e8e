"""Who is asking: the client's address (behind the proxies SVC_TRUSTED_PROXIES counts) and
user agent, as sessions and the audit trail keep them."""

from __future__ import annotations

from flask import request
from flask_limiter.util import get_remote_address

from app.domain.audit import ClientInfo


def client_ip() -> str:
    """The client's full address."""
    return get_remote_address() or "unknown"


def client_info() -> ClientInfo:
    return ClientInfo.of(client_ip(), request.headers.get("User-Agent"))
