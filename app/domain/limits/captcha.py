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

from redis import RedisError

from app.db.rows import add_unless_taken
from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients import sites
from app.domain.clock import now
from app.domain.limits.captcha_errors import CaptchaInvalid, CaptchaRequired, CaptchaUnavailable
from app.domain.services import services
from app.domain.tokens import tokens
from app.infra.captcha import PROVIDERS, Provider, siteverify
from app.infra.settings import settings
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
        if settings().captcha_script_url:
            parts = urlsplit(self.script_url)
            return (f"{parts.scheme}://{parts.netloc}",)
        return self.provider.origins


def configured() -> Captcha | None:
    """The captcha settings, or None when the mode is off."""
    config = settings()
    if config.captcha_mode == Mode.OFF or config.captcha_provider is None:
        return None
    provider = PROVIDERS[config.captcha_provider]
    return Captcha(
        mode=Mode(config.captcha_mode), name=config.captcha_provider, provider=provider,
        secret=str(config.captcha_secret), site_key=str(config.captcha_site_key),
        verify_url=config.captcha_verify_url or provider.verify_url,
        script_url=config.captcha_script_url or provider.script_url,
        timeout=config.captcha_timeout, min_score=config.captcha_min_score,
        action=config.captcha_action or None)


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
    answer = siteverify(captcha.verify_url, captcha.secret, untrusted_token, client.ip,
                        timeout=captcha.timeout)
    if answer is None:
        return Outcome.UNAVAILABLE
    return _judge(captcha, answer)


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
    origins = [settings().public_url]
    origins += [origin for site in sites.all_sites().values() for origin in site.origins]
    return {urlsplit(origin).hostname or "" for origin in origins} - {""}


# Replays ---------------------------------------------------------------------------------------

def _claim(token: str) -> bool:
    """True the first time this token is seen, False ever after (within its lifetime)."""
    digest = tokens.keyed_digest(settings().secret_key, REPLAY_SCOPE, token).hex()
    redis = services().redis
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
