"""Bot protection: checking a captcha token with its provider's siteverify endpoint (modes `off`,
`report`, `on`). A token is claimed before it is checked, so no worker or instance takes a replay.
Why: docs/architecture/design-notes.md, "Captcha"."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import requests
from flask import current_app
from redis import RedisError

from app.db.rows import add_unless_taken
from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients import sites
from app.domain.clock import now
from app.domain.limits.captcha_errors import CaptchaInvalid, CaptchaRequired, CaptchaUnavailable
from app.domain.tokens import tokens
from app.domain.tools import tools
from app.models import FailureCounter
from app.observability import count_captcha

log = logging.getLogger("svc_auth.captcha")


class Mode(StrEnum):
    """SVC_CAPTCHA_MODE (see the module's doc)."""

    OFF = "off"
    REPORT = "report"
    ON = "on"


TOKEN_LIFETIME = timedelta(minutes=10)  # longer than any provider keeps a token valid (5 min)
REPLAY_SCOPE = "captcha-token"


@dataclass(frozen=True)
class Provider:
    verify_url: str
    script_url: str
    origins: tuple[str, ...]  # what the page with the widget may load from (CSP)
    widget_class: str  # the element the provider's script turns into a widget
    form_field: str  # the hidden field the widget fills in with the token
    style_from_origins: bool = False  # the provider's documented CSP asks for style-src too


PROVIDERS = {
    "turnstile": Provider(
        "https://challenges.cloudflare.com/turnstile/v0/siteverify",
        "https://challenges.cloudflare.com/turnstile/v0/api.js",
        ("https://challenges.cloudflare.com",), "cf-turnstile", "cf-turnstile-response"),
    "hcaptcha": Provider(
        "https://api.hcaptcha.com/siteverify", "https://js.hcaptcha.com/1/api.js",
        ("https://hcaptcha.com", "https://*.hcaptcha.com"), "h-captcha", "h-captcha-response",
        style_from_origins=True),
    "recaptcha": Provider(
        "https://www.google.com/recaptcha/api/siteverify", "https://www.google.com/recaptcha/api.js",
        ("https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"),
        "g-recaptcha", "g-recaptcha-response"),
}

# The providers' documented always-pass secrets: never in production.
TEST_SECRETS = frozenset({
    "1x0000000000000000000000000000000AA",  # Turnstile
    "0x0000000000000000000000000000000000000000",  # hCaptcha
    "6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe",  # reCAPTCHA v2
})


class Outcome(StrEnum):
    """What a check found: the metric's `result` label."""

    PASSED = "passed"
    MISSING = "missing"
    FAILED = "failed"
    REPLAYED = "replayed"
    WRONG_HOSTNAME = "wrong_hostname"
    WRONG_ACTION = "wrong_action"
    LOW_SCORE = "low_score"
    UNAVAILABLE = "unavailable"


def check_settings(config: dict[str, Any]) -> None:
    """Refuse to start with captcha settings that cannot work, or that are unsafe in production."""
    mode, provider = config["CAPTCHA_MODE"], config["CAPTCHA_PROVIDER"]
    if mode not in list(Mode):
        raise RuntimeError("SVC_CAPTCHA_MODE must be off, report or on.")
    if provider is not None and provider not in PROVIDERS:
        raise RuntimeError("SVC_CAPTCHA_PROVIDER must be turnstile, hcaptcha or recaptcha.")
    if mode != Mode.OFF and not (provider and config["CAPTCHA_SECRET"]
                              and config["CAPTCHA_SITE_KEY"]):
        raise RuntimeError(f"SVC_CAPTCHA_MODE={mode} needs SVC_CAPTCHA_PROVIDER,"
                           " SVC_CAPTCHA_SECRET and SVC_CAPTCHA_SITE_KEY.")
    if not 0.0 <= float(config["CAPTCHA_MIN_SCORE"]) <= 1.0:
        raise RuntimeError("SVC_CAPTCHA_MIN_SCORE must be between 0 and 1.")
    if not 0 < float(config["CAPTCHA_TIMEOUT"]) <= 10:
        raise RuntimeError("SVC_CAPTCHA_TIMEOUT must be between 0 and 10 seconds.")
    if config["ENV"] != "production" or not provider:
        return
    if not config["CAPTCHA_SECRET"]:
        raise RuntimeError("SVC_CAPTCHA_PROVIDER needs SVC_CAPTCHA_SECRET in production.")
    if config["CAPTCHA_SECRET"] in TEST_SECRETS:
        raise RuntimeError("SVC_CAPTCHA_SECRET is a provider's always-pass test secret.")


# The settings, as one value ------------------------------------------------------------------

@dataclass(frozen=True)
class Captcha:
    mode: Mode
    name: str
    provider: Provider
    secret: str
    site_key: str
    verify_url: str
    script_url: str
    timeout: float
    min_score: float
    action: str | None

    @property
    def enforced(self) -> bool:
        return self.mode is Mode.ON

    @property
    def challenge(self) -> dict[str, str]:
        """What a client needs to show the widget: `captcha` in a 422's body."""
        return {"provider": self.name, "site_key": self.site_key}

    @property
    def origins(self) -> tuple[str, ...]:
        """Where the page with the widget loads from: the provider's, or the configured
        script's origin."""
        if current_app.config["CAPTCHA_SCRIPT_URL"]:
            parts = urlsplit(self.script_url)
            return (f"{parts.scheme}://{parts.netloc}",)
        return self.provider.origins


def configured() -> Captcha | None:
    """The captcha settings, or None when the mode is off."""
    config = current_app.config
    if config["CAPTCHA_MODE"] == Mode.OFF:
        return None
    provider = PROVIDERS[config["CAPTCHA_PROVIDER"]]
    return Captcha(
        mode=Mode(config["CAPTCHA_MODE"]), name=config["CAPTCHA_PROVIDER"], provider=provider,
        secret=str(config["CAPTCHA_SECRET"]), site_key=str(config["CAPTCHA_SITE_KEY"]),
        verify_url=config["CAPTCHA_VERIFY_URL"] or provider.verify_url,
        script_url=config["CAPTCHA_SCRIPT_URL"] or provider.script_url,
        timeout=float(config["CAPTCHA_TIMEOUT"]), min_score=float(config["CAPTCHA_MIN_SCORE"]),
        action=config["CAPTCHA_ACTION"] or None)


# Checking --------------------------------------------------------------------------------------

def check(purpose: str, untrusted_token: str, client: ClientInfo, *,
          unavailable_refuses: bool = True) -> Outcome:
    """Check a captcha token for `purpose` (signup, login, forgot_password...): its outcome,
    counted and logged. With the mode `on`: CaptchaRequired when there is no token,
    CaptchaInvalid when it does not pass, and CaptchaUnavailable when the provider does not
    answer, unless `unavailable_refuses` is false (sign-in falls back to its throttles).
    With the mode `report` nothing is refused; with `off`, nothing is checked."""
    captcha = configured()
    if captcha is None:
        return Outcome.PASSED
    outcome = _outcome(captcha, untrusted_token, client)
    count_captcha(purpose, outcome)
    if outcome is not Outcome.PASSED:
        log.warning("captcha %s: %s (mode %s) ip=%s", purpose, outcome, captcha.mode, client.ip)
    if outcome is Outcome.UNAVAILABLE:
        audit.record_alone(AuditName.CAPTCHA_UNAVAILABLE, client)
    if not captcha.enforced or outcome is Outcome.PASSED:
        return outcome
    if outcome is Outcome.MISSING:
        raise CaptchaRequired(captcha.challenge)
    if outcome is Outcome.UNAVAILABLE:
        if unavailable_refuses:
            raise CaptchaUnavailable()
        return outcome
    raise CaptchaInvalid(captcha.challenge)


def _outcome(captcha: Captcha, untrusted_token: str, client: ClientInfo) -> Outcome:
    if not untrusted_token:
        return Outcome.MISSING
    if not _claim(untrusted_token):
        return Outcome.REPLAYED
    answer = _siteverify(captcha, untrusted_token, client.ip)
    if answer is None:
        return Outcome.UNAVAILABLE
    return _judge(captcha, answer)


def _siteverify(captcha: Captcha, token: str, remote_ip: str | None) -> dict[str, Any] | None:
    """The provider's answer, or None when it gave none we can read in time."""
    form = {"secret": captcha.secret, "response": token}
    if remote_ip:
        form["remoteip"] = remote_ip
    try:
        answer = requests.post(captcha.verify_url, data=form, timeout=captcha.timeout)
        answer.raise_for_status()
        body = answer.json()
    except (requests.RequestException, ValueError) as error:
        log.error("captcha provider unavailable: %s", type(error).__name__)
        return None
    return body if isinstance(body, dict) else None


def _judge(captcha: Captcha, answer: dict[str, Any]) -> Outcome:
    if answer.get("success") is not True:
        return Outcome.FAILED
    hostname = answer.get("hostname")
    if not isinstance(hostname, str) or hostname not in allowed_hostnames():
        return Outcome.WRONG_HOSTNAME
    if captcha.action is not None and answer.get("action") != captcha.action:
        return Outcome.WRONG_ACTION
    score = answer.get("score")
    if captcha.name == "recaptcha" and score is not None and (
            not isinstance(score, int | float) or score < captcha.min_score):
        return Outcome.LOW_SCORE
    return Outcome.PASSED


def allowed_hostnames() -> set[str]:
    """The service's host and every registered client site's origin's."""
    origins = [current_app.config["PUBLIC_URL"]]
    origins += [origin for site in sites.all_sites().values() for origin in site.origins]
    return {urlsplit(origin).hostname or "" for origin in origins} - {""}


# Replays ---------------------------------------------------------------------------------------

def _claim(token: str) -> bool:
    """True the first time this token is seen, False ever after (within its lifetime)."""
    digest = tokens.keyed_digest(str(current_app.config["SECRET_KEY"]), REPLAY_SCOPE,
                                 token).hex()
    redis = tools().live_sessions.redis
    if redis is not None:
        try:
            return bool(redis.set(f"svc-auth:captcha:{digest}", b"1", nx=True,
                                  ex=int(TOKEN_LIFETIME.total_seconds())))
        except RedisError as error:
            log.error("redis unavailable: captcha tokens claimed in the database (%s)",
                      type(error).__name__)
    return _claim_in_database(digest)


@writes
def _claim_in_database(digest: str) -> bool:
    """One row per token (kept until `purge_stale` deletes it with the other counters)."""
    at = now()
    return add_unless_taken(FailureCounter(scope=REPLAY_SCOPE, subject=digest, source="*",
                                           failures=1, window_start=at, last_failure_at=at))
