"""Where a sign-in goes once its account is known, as a value: tokens for an API client, this
browser's session (with a code for the client site it came from, if any), or a code for a client
site alone. A pending sign-in keeps its destination in its row until the second step is done."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.sessions.handoff import HandTo
from app.models import PendingSignIn


@dataclass(frozen=True)
class ToApi:
    """A session and its first tokens, for the API client that signed in."""


@dataclass(frozen=True)
class ToBrowser:
    """This browser's session; and a code for the client site it came from, if any. Not
    `kept` signed in, the session ends within hours (BROWSER_SESSION_SHORT_SECONDS)."""

    hand_to: HandTo | None = None
    kept: bool = True


@dataclass(frozen=True)
class ToSite:
    """A code for a client site, and no session here (a sign-in the site started via the API)."""

    hand_to: HandTo


Destination = ToApi | ToBrowser | ToSite


def hand_to(destination: Destination) -> HandTo | None:
    return None if isinstance(destination, ToApi) else destination.hand_to


def columns(destination: Destination) -> dict[str, str | None]:
    """The destination as a pending sign-in's columns."""
    kind = {ToApi: "api", ToBrowser: "browser", ToSite: "site"}[type(destination)]
    to = hand_to(destination)
    return {"destination": kind, "redirect_uri": to.redirect_uri if to else None,
            "code_challenge": to.code_challenge if to else None,
            "client_state": to.state if to else None}


def of(pending: PendingSignIn) -> Destination | None:
    """The destination a pending sign-in keeps (None for a row written before they kept one)."""
    to = (HandTo(pending.redirect_uri, pending.code_challenge, pending.client_state)
          if pending.redirect_uri is not None else None)
    if pending.destination == "api":
        return ToApi()
    if pending.destination == "browser":
        return ToBrowser(to)
    if pending.destination == "site" and to is not None:
        return ToSite(to)
    return None

