"""What a client learns about the person, by the scope the person allowed it: the one rule for
the ID token, the userinfo answer and the events a third-party client hears
(app/domain/deliveries.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The claims each scope adds to `sub`.
_BY_SCOPE = {"email": ("email", "email_verified"), "profile": ("name",)}


def claim_names(scope: str) -> frozenset[str]:
    """`sub`, and by scope `email` and `email_verified` (email) and `name` (profile)."""
    return frozenset(("sub", *(claim for word in scope.split() for claim in
                               _BY_SCOPE.get(word, ()))))


def allowed(values: Mapping[str, Any], scope: str) -> dict[str, Any]:
    """Those of `values` (by claim name) that a client allowed `scope` may know."""
    names = claim_names(scope)
    return {claim: value for claim, value in values.items() if claim in names}
