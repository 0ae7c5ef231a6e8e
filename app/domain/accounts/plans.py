"""Plans: the word sites read in an account's tokens and in verify. What a plan word is, and that
no account is put on a plan outside the catalogue (SVC_PLANS, by default free, pro and team):
one rule for the CLI, the admin API, the console and sign-up. New accounts get
SVC_DEFAULT_PLAN, which the catalogue holds."""

from __future__ import annotations

from app.domain.errors import InvalidBody
from app.domain.text import N_, Words, is_printable
from app.infra.settings import PLAN, WHAT_A_PLAN_IS, SettingError, settings

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


# The default catalogue's plans as people read them (the pages translate them); SVC_PLAN_NAMES
# names any plan, in each language it wants.
NAMES: dict[str, Words] = {"free": N_("Free"), "pro": N_("Pro"), "team": N_("Team")}
LONGEST_NAME = 64


def display_name(plan: str, language: str) -> str:
    """What a person reads for `plan` on a page in `language`: SVC_PLAN_NAMES's name (in that
    language, else English, else its first), our own name for free, pro and team (Words, which
    the pages translate), else the plan word itself."""
    named = _names(settings().plan_names).get(plan)
    if named:
        return named.get(language) or named.get("en") or next(iter(named.values()))
    return NAMES.get(plan, plan)


def _names(setting: object) -> dict[str, dict[str, str]]:
    """SVC_PLAN_NAMES ({"pro": "Pro", "gold": {"en": "Gold", "de": "Gold"}}) as plan ->
    language -> name ("" for a name in every language); ValueError saying what is wrong."""
    if setting is None or setting == "":
        return {}
    if not isinstance(setting, dict):
        raise ValueError("it is a JSON object of plans")
    names: dict[str, dict[str, str]] = {}
    for plan, said in setting.items():
        if not PLAN.fullmatch(str(plan)):
            raise ValueError(f"{plan!r} is not a plan ({WHAT_A_PLAN_IS})")
        by_language = {"": said} if isinstance(said, str) else said
        if not isinstance(by_language, dict) or not by_language or not all(
                isinstance(n, str) and n.strip() and len(n) <= LONGEST_NAME and is_printable(n)
                for n in by_language.values()):
            raise ValueError(f"the name of {plan} is a text of at most {LONGEST_NAME} "
                             f"characters, or an object of such texts by language")
        names[plan] = {str(language): name.strip() for language, name in by_language.items()}
    return names


def default() -> str:
    """The plan of a new account that is given none (sign-up, a provider's first sign-in)."""
    return settings().default_plan


def catalogue() -> tuple[str, ...]:
    """The plans there are (SVC_PLANS)."""
    return settings().plans


def check_names(setting: object) -> None:
    """Refuse to start with a malformed SVC_PLAN_NAMES (called where the settings are parsed)."""
    try:
        _names(setting)
    except ValueError as error:
        raise SettingError(f"SVC_PLAN_NAMES must be a JSON object such as "
                           f"{{\"pro\": {{\"en\": \"Pro\", \"de\": \"Profi\"}}}}: {error}."
                           ) from None
