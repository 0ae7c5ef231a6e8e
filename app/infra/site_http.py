"""Posting to a client site's endpoint (webhooks, back-channel logout): no redirect followed, a
timeout, and a look at where a host name resolves to. Deciding nothing: which addresses a
destination may have is the domain's rule (app/domain/clients/endpoints.py)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping

import requests


class Refused(Exception):
    """The endpoint answered, but not with a 2xx (a redirect included: none is followed)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


def addresses_of(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address `host` resolves to now (an IP literal: itself). OSError when it does not
    resolve."""
    found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]


# Prefixes that carry an IPv4 address, which is where a packet sent to them ends up: 6to4
# (2002::/16, in its second and third groups), NAT64's well-known prefix (64:ff9b::/96, in its
# last 32 bits) and IPv4-mapped (::ffff:0:0/96). Each is judged as the address it carries.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Never a site's: NAT64 for a local network (RFC 8215), Teredo (the client's address is hidden
# in it), the deprecated IPv4-compatible and site-local addresses.
_NEVER = tuple(ipaddress.IPv6Network(net) for net in (
    "64:ff9b:1::/48", "2001::/32", "::/96", "fec0::/10"))


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return None


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not loopback, private, link-local, site-local, multicast, reserved or unspecified. An
    IPv6 address that carries an IPv4 one (mapped, 6to4, NAT64) is judged as that address;
    Teredo and IPv4-compatible addresses are refused."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        if carried is not None:
            return is_public(carried)
        if any(address in net for net in _NEVER):
            return False
    return address.is_global and not (address.is_multicast or address.is_reserved)


def post(url: str, *, data: bytes | Mapping[str, str], headers: Mapping[str, str],
         timeout: float) -> int:
    """POST to `url`; its status when it is a 2xx, Refused otherwise; requests' errors (a
    timeout, a refused connection) as they come."""
    with requests.post(url, data=data, headers=dict(headers), timeout=timeout,
                       allow_redirects=False) as response:
        if not 200 <= response.status_code < 300:
            raise Refused(response.status_code)
        return response.status_code
