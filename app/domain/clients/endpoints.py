"""Where the service may send a client site's events (webhooks, back-channel logout): in
production an https URL whose host resolves only to public addresses, checked when it is
registered and again before each delivery (DNS can change); elsewhere also http to this machine,
so that a developer, or a test, can run a receiver."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from app.domain.errors import InvalidBody
from app.infra.settings import settings
from app.infra.site_http import addresses_of, is_public

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class UnsafeEndpoint(InvalidBody):
    """A destination the rule above refuses; at delivery time, a failed attempt."""


def check_endpoint(url: str, *, production: bool | None = None, resolve: bool = True) -> str:
    """`url`, or UnsafeEndpoint saying why not (`production`: the app's SVC_ENV unless given).
    Without `resolve`, a host name's addresses are not looked up (settings, read at start)."""
    if production is None:
        production = settings().production
    parts = urlsplit(url)
    if not parts.hostname or parts.username or parts.password or parts.fragment:
        raise UnsafeEndpoint(f"{url!r} needs a host, and no user, password or fragment.")
    if not production:
        if parts.scheme == "https" or (parts.scheme == "http"
                                       and parts.hostname in LOOPBACK_HOSTS):
            return url
        raise UnsafeEndpoint(f"{url!r} must be https (http only for this machine).")
    if parts.scheme != "https":
        raise UnsafeEndpoint(f"{url!r} must be https in production.")
    try:
        found = ([ipaddress.ip_address(parts.hostname)] if _is_literal(parts.hostname)
                 else addresses_of(parts.hostname, parts.port or 443) if resolve else None)
    except (OSError, UnicodeError, ValueError):
        raise UnsafeEndpoint(f"{parts.hostname} does not resolve.") from None
    if found is None:
        return url
    if not found or not all(is_public(address) for address in found):
        raise UnsafeEndpoint(f"{parts.hostname} resolves to a loopback, private or link-local "
                             "address.")
    return url


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
