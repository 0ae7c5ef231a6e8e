"""Plans: the word sites read in an account's tokens and in verify. What a plan word is, and that
no account is put on a plan outside the catalogue (SVC_PLANS, by default free, pro and team):
one rule for the CLI, the admin API, the console and sign-up. New accounts get
SVC_DEFAULT_PLAN, which the catalogue holds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flask import current_app

from app.domain.errors import InvalidBody
from app.domain.text import N_, Words, is_printable

# The anchors are for the OpenAPI document's pattern; here it is always fullmatch (Python's `$`
# matches before a final line break, so match would take "pro\n").
PLAN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
WHAT_A_PLAN_IS = ("up to 32 lower-case letters, digits, dashes and underscores, starting with "
                  "a letter or a digit")


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
    named = _names(current_app.config["PLAN_NAMES"]).get(plan)
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
    return str(_as_read(current_app.config["DEFAULT_PLAN"]))


def catalogue() -> tuple[str, ...]:
    """The plans there are (SVC_PLANS)."""
    return _words(current_app.config["PLANS"])


def _as_read(setting: object) -> object:
    """Flask reads SVC_* values as JSON when they are: SVC_PLANS=5 comes as the number 5."""
    return str(setting) if type(setting) is int else setting


DEFAULT_CATALOGUE = "free,pro,team"


def _words(setting: object) -> tuple[str, ...]:
    """SVC_PLANS as plan words ("free,pro,team", or a list from code); the default catalogue
    when unset or empty. ValueError saying what is wrong."""
    setting = _as_read(setting)
    if setting is None or (isinstance(setting, str) and not setting.strip()):
        setting = DEFAULT_CATALOGUE
    items = setting.split(",") if isinstance(setting, str) else setting
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ValueError("it is a list of plans")
    words = tuple(item.strip() for item in items)
    for word in words:
        if not PLAN.fullmatch(word):
            raise ValueError(f"{word!r} is not a plan ({WHAT_A_PLAN_IS})")
    if len(set(words)) != len(words):
        raise ValueError("a plan is named twice")
    return words


def check_settings(config: Mapping[str, Any]) -> None:
    """Refuse to start with a malformed catalogue, or a default plan outside it."""
    try:
        offered = _words(config["PLANS"])
    except ValueError as error:
        raise RuntimeError(f"SVC_PLANS must be plans separated by commas, such as "
                           f"\"free,pro,team\": {error}.") from None
    try:
        _names(config["PLAN_NAMES"])
    except ValueError as error:
        raise RuntimeError(f"SVC_PLAN_NAMES must be a JSON object such as "
                           f"{{\"pro\": {{\"en\": \"Pro\", \"de\": \"Profi\"}}}}: {error}."
                           ) from None
    fallback = _as_read(config["DEFAULT_PLAN"])
    if not isinstance(fallback, str) or not PLAN.fullmatch(fallback):
        raise RuntimeError(f"SVC_DEFAULT_PLAN must be a plan: {WHAT_A_PLAN_IS}.")
    if fallback not in offered:
        raise RuntimeError(f"SVC_DEFAULT_PLAN is {fallback}, which is not one of SVC_PLANS "
                           f"({', '.join(offered)}): new accounts would get a plan there is "
                           f"not. Add it to SVC_PLANS or set SVC_DEFAULT_PLAN to one of them.")
