"""svc_auth_client.AccountState (issue 33, findings 15 and 18): a site that keeps one per account
ends with the service's state whatever order the events arrive in, and takes an event an erasure
emptied of the address and the name without failing."""

from __future__ import annotations

import itertools

from svc_auth_client import AccountState


def event(sequence, kind, **data):
    return {"type": kind, "id": f"evt_{sequence}", "sequence": sequence,
            "data": {"user_id": "u-1", **data}}


HISTORY = [
    event(1, "user.created", email="ada@example.com", full_name="Ada", plan="free"),
    event(2, "user.updated", changed=["plan"], plan="pro"),
    event(3, "user.disabled"),
    event(4, "sessions.ended", reason="account_disabled", session_ids=["s-1"]),
    event(5, "user.updated", changed=["full_name", "plan"], full_name="Ada L.", plan="team"),
    event(6, "user.enabled"),
]
FINAL = {"email": "ada@example.com", "full_name": "Ada L.", "plan": "team", "disabled": False}


def test_every_arrival_order_ends_with_the_newest_values():
    for order in itertools.permutations(HISTORY):
        state = AccountState()
        for each in order:
            state.apply(each)
        assert state.values == FINAL, [e["sequence"] for e in order]


def test_an_older_event_changes_nothing_and_says_so():
    state = AccountState()
    assert state.apply(HISTORY[4]) == {"full_name": "Ada L.", "plan": "team"}
    assert state.apply(HISTORY[1]) == {}  # plan 'pro' is older than 'team'
    assert state.apply(HISTORY[1]) == {}  # a retry too
    assert state.values["plan"] == "team"


def test_after_deletion_no_late_event_brings_the_account_back():
    state = AccountState()
    state.apply(HISTORY[0])
    assert state.apply(event(7, "user.deleted")) == {"deleted": True}
    assert state.apply(HISTORY[4]) == {}
    assert state.deleted and state.values == {}


def test_an_event_an_erasure_emptied_is_taken_without_failing():
    state = AccountState()
    assert state.apply(event(2, "user.updated", changed=["email", "email_verified"],
                             email_verified=True)) == {"email_verified": True}
    assert state.apply(event(1, "user.created", plan="free")) == {"plan": "free",
                                                                  "disabled": False}
    assert state.apply({"type": "user.updated", "id": "evt_3", "sequence": 3,
                        "data": {"user_id": "u-1"}}) == {}
