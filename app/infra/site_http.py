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


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Not loopback, private, link-local, multicast, reserved or unspecified (an IPv4 address
    mapped into IPv6 is judged as itself)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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
