"""Plans: the word sites read in an account's tokens and in verify. What a plan word is, and that
no account is put on a plan outside the catalogue (SVC_PLANS, by default free, pro and team):
one rule for the CLI, the admin API, the console and sign-up. New accounts get
SVC_DEFAULT_PLAN, which the catalogue holds."""

from __future__ import annotations

from app.domain.errors import InvalidBody
from app.infra.settings import PLAN, WHAT_A_PLAN_IS, settings

__all__ = ["PLAN", "WHAT_A_PLAN_IS", "UnknownPlan", "catalogue", "check", "default"]


class UnknownPlan(InvalidBody):
    """A well-formed plan that is not in the catalogue (SVC_PLANS)."""

    code = "unknown_plan"


def check(plan: str, pointer: str = "#/plan") -> str:
    """`plan`, if an account may be put on it; InvalidBody, or UnknownPlan, saying why not."""
    if not PLAN.fullmatch(plan):
        reason = f"A plan is {WHAT_A_PLAN_IS}."
        raise InvalidBody(reason, [{"pointer": pointer, "detail": reason}])
    offered = catalogue()
    if plan not in offered:
        reason = f"There is no plan {plan}: the plans are {', '.join(offered)}."
        raise UnknownPlan(reason, [{"pointer": pointer, "detail": reason}])
    return plan


def default() -> str:
    """The plan of a new account that is given none (sign-up, a provider's first sign-in)."""
    return settings().default_plan


def catalogue() -> tuple[str, ...]:
    """The plans there are (SVC_PLANS)."""
    return settings().plans
