"""A device: a readable name for the one behind a user agent (the account's session list, and
mails), and the key a session keeps of it (a browser on a network)."""

from __future__ import annotations

import hashlib
import ipaddress
import re

from flask_babel import gettext as _

from app.domain.audit import ClientInfo

_BROWSERS = (("Edg/", "Edge"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"),
             ("Chromium/", "Chromium"), ("Safari/", "Safari"))
_SYSTEMS = (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
            ("Windows", "Windows"), ("Mac OS X", "macOS"), ("Linux", "Linux"))
# A program's own name and version ("curl/8.4.0"). Whoever signs in chooses the user agent: any
# other text of theirs would read, in the owner's mail or list, as words of ours.
_PRODUCT = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,31}/[0-9][A-Za-z0-9._-]{0,15}")


def describe(user_agent: str | None) -> str:
    if not user_agent:
        return str(_("Unknown device"))
    browser = next((name for marker, name in _BROWSERS if marker in user_agent), None)
    system = next((name for marker, name in _SYSTEMS if marker in user_agent), None)
    if browser and system:
        return str(_("%(browser)s on %(system)s", browser=browser, system=system))
    if browser or system:
        return browser or str(_("A browser on %(system)s", system=system))
    product = (user_agent.split(maxsplit=1) or [""])[0]
    return product if _PRODUCT.fullmatch(product) else str(_("Unknown device"))


IPV6_PREFIX = 64  # one customer's network: a host picks any address in it


def network_key(ip: str | None) -> str:
    """The part of an address that limits count by: an IPv6 address's /64 (an IPv4-mapped one
    as IPv4), an IPv4 address as it is. Anything else is returned unchanged."""
    try:
        address = ipaddress.ip_address((ip or "").split("%", 1)[0])
    except ValueError:
        return ip or ""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(address), IPV6_PREFIX), strict=False))
    return str(address)


def device_of(client: ClientInfo) -> str:
    """The device a client signs in from, as its session keeps it: its browser (user agent) on
    its network (`network_key`), digested to a fixed length for the index."""
    seen = f"{network_key(client.ip)}\n{client.user_agent or ''}"
    return hashlib.sha256(seen.encode()).hexdigest()[:32]
