"""Account events from svc-auth, applied in the service's order whatever order they arrive in.

Deliveries are not in order: a retry after an outage, two workers, a slow attempt can each bring
an older event after a newer one. Every event carries `sequence`, its place among its account's
events (in the order the changes happened at the service; numbers a site is not told are
skipped). `AccountState.apply` takes a value only from an event newer than the one it already
has that value from, so a site that keeps one `AccountState` per account ends with the
service's state, however late an event comes:

    state = states.setdefault(event["data"]["user_id"], AccountState())
    newer = state.apply(event)      # {"plan": "pro"}: what this event changed; {} if nothing

Needs nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The values an account's events set, by event type (user.updated: those in `changed`).
_CREATED = ("email", "full_name", "plan")
_SET_BY_TYPE: dict[str, dict[str, Any]] = {
    "user.created": {"disabled": False},
    "user.disabled": {"disabled": True},
    "user.enabled": {"disabled": False},
    "user.deletion_scheduled": {"disabled": True},
}


@dataclass
class AccountState:
    """What a site knows of one account from its events: `values` (email, full_name, plan,
    email_verified, disabled: those the site is told), each with the sequence number of the
    event it came from; `deleted` once `user.deleted` came (the values are then gone, and no
    event of the account changes anything any more)."""

    values: dict[str, Any] = field(default_factory=dict)
    sequences: dict[str, int] = field(default_factory=dict)
    deleted: bool = False

    def apply(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """Take from a verified event the values newer than those known; the ones taken."""
        if self.deleted:
            return {}
        if event["type"] == "user.deleted":
            self.deleted = True
            self.values.clear()
            self.sequences.clear()
            return {"deleted": True}
        sequence = int(event["sequence"])
        taken = {}
        for name, value in values_of(event).items():
            if sequence > self.sequences.get(name, 0):
                self.values[name] = taken[name] = value
                self.sequences[name] = sequence
        return taken


def values_of(event: Mapping[str, Any]) -> dict[str, Any]:
    """The values an event sets, whatever its age. An event whose data an erasure emptied of
    the address and the name sets only what it still holds."""
    data: Mapping[str, Any] = event.get("data") or {}
    found = dict(_SET_BY_TYPE.get(event["type"], {}))
    if event["type"] == "user.created":
        found |= {name: data[name] for name in _CREATED if name in data}
    elif event["type"] == "user.updated":
        found |= {name: data[name] for name in data.get("changed") or () if name in data}
    return found
