"""The service's settings as one frozen, typed value, parsed and checked once when the app is
made: a setting that is misspelt, of the wrong kind or unsafe stops the start with its name,
never a request. Code reads `settings().access_token_ttl`, never a raw dictionary key.

Where the values come from (defaults, SVC_* variables, a caller's overrides) is app/config.py's;
what each means, app/config_reference.py's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, get_type_hints

import limits
from flask import Flask, current_app

from app.infra.captcha import PROVIDERS as CAPTCHA_PROVIDERS
from app.infra.captcha import TEST_SECRETS as CAPTCHA_TEST_SECRETS

KEY = "svc_auth.settings"  # where the app keeps its Settings, in app.extensions


class SettingError(RuntimeError):
    """A setting the service cannot start with; the message begins with the setting's name."""


# A plan word (app/domain/accounts/plans.py). The anchors are for the OpenAPI document's
# pattern; here it is always fullmatch (Python's `$` matches before a final line break, so
# match would take "pro\n").
PLAN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
WHAT_A_PLAN_IS = ("up to 32 lower-case letters, digits, dashes and underscores, starting with "
                  "a letter or a digit")
DEFAULT_CATALOGUE = "free,pro,team"

# Outside production an access token may live a few seconds, so that a client site's developer
# sees their refresh logic work without waiting a minute.
SHORTEST_ACCESS_TOKEN_TTL = {"production": 60, "otherwise": 5}

# Counted in the database, one limit each (app/domain/limits/throttle.py); the other LIMIT_*
# are flask-limiter's, which takes several separated by semicolons.
ONE_LIMIT = ("LIMIT_LOGIN_FAILURES", "LIMIT_PASSWORD_CHANGE_FAILURES",
             "LIMIT_SECOND_FACTOR_FAILURES", "CAPTCHA_LOGIN_FAILURES")


@dataclass(frozen=True)
class Settings:  # one field per setting: its name in lower case
    env: str
    brand: str
    public_url: str
    secret_key: str
    database_url: str | None
    client_sites: dict[str, Any]
    mail_url: str
    mail_from: str | None
    mail_attempts: int
    mail_retry_delay: float
    outbox_poll_seconds: float
    outbox_lease_seconds: float
    mail_retention_days: float
    mail_timeout: float
    webhook_attempts: int
    webhook_retry_delay: float
    webhook_retry_max_delay: float
    webhook_timeout: float
    require_email_confirmation: bool
    email_code_sign_in: bool
    plans: tuple[str, ...]
    default_plan: str
    plan_names: Any  # JSON: checked by app/domain/accounts/plans.py's check_names at start
    redis_url: str | None
    session_cache_seconds: float
    trusted_proxies: int
    jwt_alg: str
    jwt_audience: str
    admin_audience: str
    jwt_keys: Any  # a JSON list of keys, or its text; app/infra/keys.py reads it
    jwt_leeway: int
    access_token_ttl: int
    refresh_idle_ttl: int
    refresh_max_ttl: int
    refresh_reuse_grace: int
    reset_token_ttl: int
    account_deletion_grace_days: int
    browser_session_short_seconds: int
    limit_export: str
    password_min_length: int
    password_max_length: int
    breached_passwords_url: str
    breached_passwords_timeout: float
    argon2_memory_cost: int
    argon2_time_cost: int
    argon2_parallelism: int
    ratelimit_enabled: bool
    ratelimit_fail_closed: bool
    limit_login: str
    limit_login_ip: str
    limit_login_failures: str
    login_delay_after: int
    login_delay_max: int
    limit_password_change_failures: str
    limit_second_factor_failures: str
    mfa_pending_attempts: int
    mfa_pending_ttl: int
    step_up_seconds: int
    limit_signup: str
    limit_forgot: str
    limit_forgot_ip: str
    limit_reset: str
    limit_exchange: str
    limit_refresh: str
    limit_passkey_options: str
    limit_sso: str
    limit_oidc_token: str
    limit_admin: str
    pushed_requests_per_client: int
    pushed_requests_per_address: int
    google_client_id: str | None
    google_client_secret: str | None
    google_metadata_url: str
    github_client_id: str | None
    github_client_secret: str | None
    github_authorize_url: str
    github_token_url: str
    github_api_url: str
    provider_timeout: float
    captcha_mode: str
    captcha_provider: str | None
    captcha_secret: str | None
    captcha_site_key: str | None
    captcha_verify_url: str | None
    captcha_script_url: str | None
    captcha_timeout: float
    captcha_min_score: float
    captcha_action: str | None
    captcha_login_failures: str
    audit_retention_days: int
    code_retention_hours: int
    log_format: str | None
    metrics_token: str | None
    max_content_length: int
    clock: Callable[[], datetime]

    @property
    def production(self) -> bool:
        return self.env == "production"

    def limit(self, name: str) -> str:
        """A LIMIT_* setting (or CAPTCHA_LOGIN_FAILURES) by its name, for the code that is
        given a limit's name."""
        value: str = getattr(self, name.lower())
        return value


def names() -> tuple[str, ...]:
    """The settings' names (SVC_ without its prefix), in the fields' order."""
    return tuple(field.name.upper() for field in fields(Settings))


def parse(config: Mapping[str, Any]) -> Settings:
    """The settings in `config` (app.config, once the sources are merged), typed and checked.
    SettingError naming the first setting that is wrong."""
    hints = get_type_hints(Settings)
    values = {field.name: _typed(field.name.upper(), config[field.name.upper()],
                                 hints[field.name])
              for field in fields(Settings)}
    found = Settings(**values)
    _check(found)
    return found


def changed(current: Settings, changes: Mapping[str, Any], *, checked: bool = True) -> Settings:
    """`current` with some settings (by their upper-case names) changed, and checked again
    unless told not to: for tests that change a setting of a running app."""
    hints = get_type_hints(Settings)
    found = replace(current, **{name.lower(): _typed(name, value, hints[name.lower()])
                                for name, value in changes.items()})
    if checked:
        _check(found)
    return found


def settings() -> Settings:
    """The current app's settings."""
    found: Settings = current_app.extensions[KEY]  # (not settings_of: read on every request)
    return found


def settings_of(app: Flask) -> Settings:
    """An app's settings, which its factory parsed."""
    found: Settings = app.extensions[KEY]
    return found


# Kinds -----------------------------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False,
             "on": True, "off": False}


def _typed(name: str, value: Any, kind: Any) -> Any:  # noqa: PLR0911  (one return a kind)
    """`value` as `kind`. Flask reads SVC_* values as JSON where they are (SVC_PLANS=2026 comes
    as a number, SVC_X=true as a boolean), and tests pass Python values: both are taken."""
    if kind is Any:
        return value
    if kind == str | None:
        return None if value is None else _typed(name, value, str)
    if kind is str:
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise SettingError(f"SVC_{name}: {value!r} is not text.")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str | int) and str(value).strip().lower() in _BOOLEANS:
            return _BOOLEANS[str(value).strip().lower()]
        raise SettingError(f"SVC_{name}: {value!r} is not true or false.")
    if kind is int:
        return _integer(name, value)
    if kind is float:
        return _number(name, value)
    if kind == dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise SettingError(f"SVC_{name} must be an object of sites by name.")
        return value
    if kind == tuple[str, ...]:
        return _plans(value)
    if callable(value):
        return value
    raise SettingError(f"SVC_{name}: {value!r} cannot be called.")


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise SettingError(f"SVC_{name}: {value!r} is not a whole number.")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    raise SettingError(f"SVC_{name}: {value!r} is not a whole number.")


def _number(name: str, value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return float(value)
    raise SettingError(f"SVC_{name}: {value!r} is not a number.")


def _plans(value: Any) -> tuple[str, ...]:
    """SVC_PLANS as plan words ("free,pro,team", or a list from code); the default catalogue
    when unset or empty."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        value = DEFAULT_CATALOGUE
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise _bad_plans("it is a list of plans")
    words = tuple(item.strip() for item in items)
    for word in words:
        if not PLAN.fullmatch(word):
            raise _bad_plans(f"{word!r} is not a plan ({WHAT_A_PLAN_IS})")
    if len(set(words)) != len(words):
        raise _bad_plans("a plan is named twice")
    return words


def _bad_plans(why: str) -> SettingError:
    return SettingError(f"SVC_PLANS must be plans separated by commas, such as "
                        f"\"free,pro,team\": {why}.")


# Checks ----------------------------------------------------------------------------------------

def _check(s: Settings) -> None:
    """Refuse settings that would make the service unsafe or broken."""
    _check_numbers(s)
    _check_tokens(s)
    _check_limits(s)
    _check_plans(s)
    _check_captcha(s)
    if not 0 < s.breached_passwords_timeout <= 10:
        raise SettingError("SVC_BREACHED_PASSWORDS_TIMEOUT must be above 0 and at most 10 "
                           "seconds.")
    if s.log_format not in (None, "json", "text"):
        raise SettingError("SVC_LOG_FORMAT must be json or text.")
    if not s.production:
        return
    if not s.public_url.startswith("https://"):
        raise SettingError("SVC_PUBLIC_URL must be https when SVC_ENV=production.")
    if s.mail_url.startswith(("console:", "memory:")):
        raise SettingError("SVC_MAIL_URL must be smtp://, smtps:// or file:// in production:"
                           " console:// writes reset links to the log.")


def _check_numbers(s: Settings) -> None:
    hints = get_type_hints(Settings)
    for field in fields(Settings):
        if hints[field.name] in (int, float) and getattr(s, field.name) < 0:
            raise SettingError(f"SVC_{field.name.upper()} cannot be negative.")
    for name in ("PUSHED_REQUESTS_PER_CLIENT", "PUSHED_REQUESTS_PER_ADDRESS"):
        if getattr(s, name.lower()) < 1:
            raise SettingError(f"SVC_{name} must be at least 1.")


def _check_tokens(s: Settings) -> None:
    if s.jwt_alg not in ("ES256", "EdDSA", "RS256", "HS256"):
        raise SettingError("SVC_JWT_ALG must be ES256, EdDSA, RS256 or HS256.")
    where = "production" if s.production else "otherwise"
    shortest = SHORTEST_ACCESS_TOKEN_TTL[where]
    if not shortest <= s.access_token_ttl <= 3600:
        raise SettingError(
            f"SVC_ACCESS_TOKEN_TTL must be between {shortest} and 3600 seconds"
            + (" when SVC_ENV=production." if s.production else " (60 when SVC_ENV=production)."))
    if s.refresh_idle_ttl > s.refresh_max_ttl:
        raise SettingError("SVC_REFRESH_IDLE_TTL cannot exceed SVC_REFRESH_MAX_TTL.")
    if s.admin_audience == s.jwt_audience:
        raise SettingError("SVC_ADMIN_AUDIENCE must differ from SVC_JWT_AUDIENCE: a client's "
                           "own token would pass for a person's at every client site.")
    if not 0 <= s.refresh_reuse_grace <= 60:
        raise SettingError("SVC_REFRESH_REUSE_GRACE must be between 0 and 60 seconds.")


def _check_limits(s: Settings) -> None:
    for name in names():
        if not name.startswith("LIMIT_") and name not in ONE_LIMIT:
            continue
        try:
            if name in ONE_LIMIT:
                limits.parse(s.limit(name))
            elif not limits.parse_many(s.limit(name)):
                raise ValueError(name)
        except ValueError:
            raise SettingError(f"SVC_{name} must be "
                               + ("one limit" if name in ONE_LIMIT else "a limit")
                               + ", such as \"100 per day\".") from None


def _check_plans(s: Settings) -> None:
    """A default plan that is a plan word, in the catalogue."""
    if not PLAN.fullmatch(s.default_plan):
        raise SettingError(f"SVC_DEFAULT_PLAN must be a plan: {WHAT_A_PLAN_IS}.")
    if s.default_plan not in s.plans:
        raise SettingError(
            f"SVC_DEFAULT_PLAN is {s.default_plan}, which is not one of SVC_PLANS "
            f"({', '.join(s.plans)}): new accounts would get a plan there is not. Add it to "
            f"SVC_PLANS or set SVC_DEFAULT_PLAN to one of them.")


def _check_captcha(s: Settings) -> None:
    """Captcha settings that can work, and are safe in production."""
    mode, provider = s.captcha_mode, s.captcha_provider
    if mode not in ("off", "report", "on"):
        raise SettingError("SVC_CAPTCHA_MODE must be off, report or on.")
    if provider is not None and provider not in CAPTCHA_PROVIDERS:
        raise SettingError("SVC_CAPTCHA_PROVIDER must be turnstile, hcaptcha or recaptcha.")
    if mode != "off" and not (provider and s.captcha_secret and s.captcha_site_key):
        raise SettingError(f"SVC_CAPTCHA_MODE={mode} needs SVC_CAPTCHA_PROVIDER,"
                           " SVC_CAPTCHA_SECRET and SVC_CAPTCHA_SITE_KEY.")
    if not 0.0 <= s.captcha_min_score <= 1.0:
        raise SettingError("SVC_CAPTCHA_MIN_SCORE must be between 0 and 1.")
    if not 0 < s.captcha_timeout <= 10:
        raise SettingError("SVC_CAPTCHA_TIMEOUT must be between 0 and 10 seconds.")
    if not s.production or not provider:
        return
    if not s.captcha_secret:
        raise SettingError("SVC_CAPTCHA_PROVIDER needs SVC_CAPTCHA_SECRET in production.")
    if s.captcha_secret in CAPTCHA_TEST_SECRETS:
        raise SettingError("SVC_CAPTCHA_SECRET is a provider's always-pass test secret.")
