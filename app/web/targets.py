"""Where a finished sign-in hands the person back: a registered redirect URI, with the client
site's own `state` and PKCE challenge. Shared by the API's provider starts and the hosted pages,
which carry a target from page to page (login, sign-up, providers, recovery) until it is used."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from flask import g, redirect, request
from werkzeug.wrappers import Response

from app.domain.clients import sites
from app.domain.clients.errors import InvalidRedirectUri
from app.domain.sessions import handoff
from app.domain.sessions.errors import InvalidRequest

_CLIENT_STATE = re.compile(r"^[\x21-\x7e]{1,512}$")  # printable ASCII, no spaces


@dataclass(frozen=True)
class Target:
    redirect_uri: str
    state: str | None = None
    code_challenge: str | None = None

    def hand_to(self) -> handoff.HandTo:
        """Where a code for this target goes, as the domain keeps it."""
        return handoff.HandTo(self.redirect_uri, self.code_challenge, self.state)

    def query(self) -> dict[str, Any]:
        """The target as query parameters, to carry it to the next page."""
        carried: dict[str, Any] = {"redirect_uri": self.redirect_uri}
        if self.state is not None:
            carried["state"] = self.state
        if self.code_challenge is not None:
            carried |= {"code_challenge": self.code_challenge, "code_challenge_method": "S256"}
        return carried


def from_request(*, required: bool,
                 accept: tuple[str, ...] = ("redirect_uri", "callback")) -> Target | None:
    """The target named by the request's `redirect_uri` (v2, pages) or `callback` (v1, pages),
    whichever `accept` allows, of a site that uses the handoff (domain/clients/sites.py);
    InvalidRedirectUri / UnknownCallback / InvalidRequest otherwise. Resolved once a request."""
    resolved = g.setdefault("svc_targets", {})
    if (required, accept) not in resolved:
        resolved[required, accept] = _resolve(required, accept)
    found: Target | None = resolved[required, accept]
    return found


def _resolve(required: bool, accept: tuple[str, ...]) -> Target | None:
    args = request.args
    if "redirect_uri" in accept and "redirect_uri" in args:
        redirect_uri = sites.handoff_redirect_uri(args.get("redirect_uri"))
    elif "callback" in accept and ("callback" in args or accept == ("callback",)):
        redirect_uri = sites.callback_redirect_uri(args.get("callback"))
    elif required:
        raise InvalidRedirectUri()
    else:
        return None
    untrusted_state = args.get("state")
    if untrusted_state is not None and not _CLIENT_STATE.match(untrusted_state):
        raise InvalidRequest("state must be 1 to 512 printable characters.")
    challenge = handoff.checked_challenge(args.get("code_challenge"),
                                          args.get("code_challenge_method"))
    return Target(redirect_uri, untrusted_state, challenge)


def send_back(target: Target, **params: str) -> Response:
    """Redirect to the target with `params` (code and provider, or error) and its state."""
    if target.state is not None:
        params["state"] = target.state
    parts = urlsplit(target.redirect_uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    response = redirect(urlunsplit(parts._replace(query=query)))
    response.headers["Cache-Control"] = "no-store"
    return response
