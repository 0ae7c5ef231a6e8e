"""Settings: defaults, then SVC_* environment variables, then the caller's overrides.

Read once in the app factory, never at import time, and parsed there into one typed, frozen
Settings (app/infra/settings.py, which holds every check). What each setting means is in
app/config_reference.py, from which docs/operators/configuration.md is generated.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from app.database_choice import database_url
from app.domain.accounts.plans import check_names as check_plan_names
from app.domain.clients.registration import check_settings as check_client_sites
from app.domain.clock import system_clock
from app.infra.settings import DEFAULT_CATALOGUE, SettingError, Settings, parse
from app.instance_files import create_once
from app.web.limit_storage import storage_uri

DAY = 24 * 3600

DEFAULTS: dict[str, Any] = {
    "ENV": "development",
    "BRAND": "svc",
    "PUBLIC_URL": "http://127.0.0.1:5000",
    "DATABASE_URL": None,  # None: a SQLite file in the instance folder
    "CLIENT_SITES": {},
    "MAIL_URL": "console://",
    "MAIL_FROM": None,  # None: "{BRAND} <no-reply@{host of PUBLIC_URL}>"
    # The outbox (app/infra/outbox_worker.py), every lane: how often each process looks for due
    # jobs, and how long a claimed job is a worker's before another may take it (longer than a
    # job can take).
    "OUTBOX_POLL_SECONDS": 1.0,
    "OUTBOX_LEASE_SECONDS": 120,
    # Its mail lane: attempts per mail job, the first delay between two (doubled after each; 10
    # attempts span about 17 minutes), and how many days finished jobs are kept (`flask outbox
    # purge`).
    "MAIL_ATTEMPTS": 10,
    "MAIL_RETRY_DELAY": 2.0,
    "MAIL_RETENTION_DAYS": 7,
    "MAIL_TIMEOUT": 10,
    # Events to client sites (app/domain/deliveries.py), in the outbox's "event" lane: attempts
    # per delivery, the first delay between two (doubled after each, up to the longest: 25
    # attempts span about three days and five hours), and how long a site may take to answer.
    "WEBHOOK_ATTEMPTS": 25,
    "WEBHOOK_RETRY_DELAY": 5.0,
    "WEBHOOK_RETRY_MAX_DELAY": 6 * 3600.0,
    "WEBHOOK_TIMEOUT": 10,
    "REQUIRE_EMAIL_CONFIRMATION": False,
    # Signing in with a code mailed to the address (app/domain/accounts/email_sign_in.py).
    "EMAIL_CODE_SIGN_IN": True,
    # Plans (app/domain/accounts/plans.py): the plans there are, comma-separated, and the plan of
    # a new account that is given none (one of PLANS).
    "PLANS": DEFAULT_CATALOGUE,
    "DEFAULT_PLAN": "free",
    "PLAN_NAMES": {},  # a plan's name for people, by language (JSON); unset: ours for free/pro/team
    "REDIS_URL": None,
    # With Redis: how long an instance may answer "is this session live" from its own cache.
    # Revocations are seen at once; a plan or name change within this many seconds.
    "SESSION_CACHE_SECONDS": 5.0,
    "TRUSTED_PROXIES": 0,
    # Tokens
    "JWT_ALG": "ES256",
    "JWT_AUDIENCE": "svc",
    # The audience of a confidential client's own tokens (client_credentials), for the admin API:
    # never JWT_AUDIENCE, so no client site takes one for a person's token.
    "ADMIN_AUDIENCE": "svc-admin",
    "JWT_KEYS": None,  # a JSON list of private keys (PEM, or a base64url secret for HS256)
    "JWT_LEEWAY": 5,
    "ACCESS_TOKEN_TTL": 3600,
    "REFRESH_IDLE_TTL": 30 * DAY,
    "REFRESH_MAX_TTL": 90 * DAY,
    "REFRESH_REUSE_GRACE": 10,
    "RESET_TOKEN_TTL": 3600,
    "ACCOUNT_DELETION_GRACE_DAYS": 14,  # a deleted account can be restored this long
    "BROWSER_SESSION_SHORT_SECONDS": 12 * 3600,  # a hosted sign-in not "kept signed in"
    "LIMIT_EXPORT": "5 per hour",  # per account: GET /api/v2/auth/account/export
    # Passwords: argon2id at OWASP's parameters (m=19 MiB, t=2, p=1)
    "PASSWORD_MIN_LENGTH": 8,
    "PASSWORD_MAX_LENGTH": 256,
    # A range API of breached passwords (app/domain/accounts/breached.py); empty: no lookup.
    "BREACHED_PASSWORDS_URL": "",
    "BREACHED_PASSWORDS_TIMEOUT": 2.0,  # seconds for one lookup; then the password is accepted
    "ARGON2_MEMORY_COST": 19456,
    "ARGON2_TIME_COST": 2,
    "ARGON2_PARALLELISM": 1,
    # Rate limits (flask-limiter notation)
    "RATELIMIT_ENABLED": True,
    "RATELIMIT_FAIL_CLOSED": False,
    "LIMIT_LOGIN": "10 per minute",
    "LIMIT_LOGIN_IP": "50 per minute",
    # In the database (app/domain/limits/throttle.py): failures per email from devices that never
    # signed in to the account; per email and address (or device), delays that double after
    # LOGIN_DELAY_AFTER failures, up to LOGIN_DELAY_MAX seconds; wrong current passwords per
    # account.
    "LIMIT_LOGIN_FAILURES": "100 per day",
    "LOGIN_DELAY_AFTER": 5,
    "LOGIN_DELAY_MAX": 900,
    "LIMIT_PASSWORD_CHANGE_FAILURES": "5 per hour",
    # Second factors (domain/factors/second_factors.py): wrong codes per account, always counted;
    # wrong codes one pending sign-in may take before it ends; how long it waits; how recent a
    # sign-in (or a code) must be to change a factor or the password (step-up).
    "LIMIT_SECOND_FACTOR_FAILURES": "10 per hour",
    "MFA_PENDING_ATTEMPTS": 5,
    "MFA_PENDING_TTL": 300,
    "STEP_UP_SECONDS": 600,
    "LIMIT_SIGNUP": "10 per hour",
    "LIMIT_FORGOT": "5 per hour",
    "LIMIT_FORGOT_IP": "20 per hour",
    "LIMIT_RESET": "20 per minute",
    "LIMIT_EXCHANGE": "20 per minute",
    "LIMIT_REFRESH": "60 per minute",
    "LIMIT_PASSKEY_OPTIONS": "60 per minute",  # passkey ceremonies started, per address
    "LIMIT_SSO": "30 per minute",  # handoff codes for one signed-in browser (GET /login)
    # OpenID Connect clients' calls to /oauth2/token, /oauth2/revoke and /oauth2/introspect
    "LIMIT_OIDC_TOKEN": "120 per minute",
    "LIMIT_ADMIN": "600 per minute",  # per service client (or address, without a valid token)
    # Pushed authorization requests (app/domain/oidc/pushed_requests.py) waiting at once, unused
    # and unexpired: per client, and per address for a public client's (anyone may push as one).
    "PUSHED_REQUESTS_PER_CLIENT": 1000,
    "PUSHED_REQUESTS_PER_ADDRESS": 50,
    # Sign-in providers: off until a client id and secret are set
    "GOOGLE_CLIENT_ID": None,
    "GOOGLE_CLIENT_SECRET": None,
    "GOOGLE_METADATA_URL": "https://accounts.google.com/.well-known/openid-configuration",
    "GITHUB_CLIENT_ID": None,
    "GITHUB_CLIENT_SECRET": None,
    "GITHUB_AUTHORIZE_URL": "https://github.com/login/oauth/authorize",
    "GITHUB_TOKEN_URL": "https://github.com/login/oauth/access_token",
    "GITHUB_API_URL": "https://api.github.com/",
    "PROVIDER_TIMEOUT": 10,
    # Bot protection (app/domain/limits/captcha.py): "off" (captcha_token accepted and ignored),
    # "report" (verified and counted, nothing refused) or "on". A provider (turnstile, hcaptcha,
    # recaptcha) with its secret and site key; the siteverify address and the widget's script
    # are the provider's unless set (tests point them at a local stand-in).
    "CAPTCHA_MODE": "off",
    "CAPTCHA_PROVIDER": None,
    "CAPTCHA_SECRET": None,
    "CAPTCHA_SITE_KEY": None,
    "CAPTCHA_VERIFY_URL": None,
    "CAPTCHA_SCRIPT_URL": None,
    "CAPTCHA_TIMEOUT": 3.0,  # seconds for one siteverify call
    "CAPTCHA_MIN_SCORE": 0.5,  # reCAPTCHA v3: the lowest score accepted
    "CAPTCHA_ACTION": None,  # when set, the action every token must carry
    # Sign-in asks for a captcha once an email, or an address, has failed this often recently.
    "CAPTCHA_LOGIN_FAILURES": "3 per 15 minutes",
    # Retention (`flask --app wsgi purge`): audit events for this many days (0: for ever);
    # handoff codes and emailed tokens for this many hours after they expire.
    "AUDIT_RETENTION_DAYS": 365,
    "CODE_RETENTION_HOURS": 24,
    # Operations
    "LOG_FORMAT": None,  # "json" or "text"; None: json in production, text otherwise
    "METRICS_TOKEN": None,  # unset: no /metrics
    # Requests
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "CLOCK": system_clock,
}

# Settings that only a test or an embedding program may pass, never the environment.
_CODE_ONLY = {"CLOCK"}


def load(app: Flask, overrides: dict[str, Any] | None) -> Settings:
    """Merge the sources into app.config (where Flask and the extensions read their keys), and
    parse the service's own settings from it: SettingError at the first one that is wrong."""
    library = set(app.config)  # Flask's own keys, which SVC_* may set too
    app.config.from_mapping(DEFAULTS)
    _refuse_unknown(os.environ, library)
    app.config.from_prefixed_env("SVC")
    for key in _CODE_ONLY:
        app.config[key] = DEFAULTS[key]
    if overrides:
        app.config.update(overrides)
    _take_renamed(app.config, {*(overrides or {}), *(key.removeprefix("SVC_") for key in os.environ
                                                     if key.startswith("SVC_"))})
    app.config["PUBLIC_URL"] = str(app.config["PUBLIC_URL"]).rstrip("/")
    _secret_key(app)
    parsed = parse(app.config)
    check_client_sites(parsed.client_sites, reserved=(parsed.jwt_audience, parsed.admin_audience),
                       production=parsed.production)
    check_plan_names(parsed.plan_names)
    _derive(app, parsed)
    return parsed


# --- Renamed settings (issue 35, the outbox): the old name is read, with a warning at start,
# in 0.2.x; a value set under the new name wins. To be removed in 0.3.0.
RENAMED = {"MAIL_POLL_SECONDS": "OUTBOX_POLL_SECONDS", "MAIL_LEASE_SECONDS": "OUTBOX_LEASE_SECONDS"}


def _take_renamed(config: dict[str, Any], given: set[str]) -> None:
    for old, new in RENAMED.items():
        if old not in config:
            continue
        value = config.pop(old)
        if new not in given:
            config[new] = value
        logging.getLogger("svc_auth.config").warning(
            "SVC_%s is deprecated and will be ignored from the next release: use SVC_%s "
            "(docs/operators/upgrading.md)", old, new)
# --- end of renamed settings


# SVC_* names that other programs of the family read, never the service: gunicorn.conf.py's
# address, the test suite's and the fuzzer's, the example client sites'.
NOT_SETTINGS = re.compile(r"SVC_(BIND|TEST_\w+|FUZZ_\w+|AUTH_\w+|CLIENT_ID|CLIENT_SECRET)")
LIBRARY_PREFIXES = ("SQLALCHEMY_", "RATELIMIT_", "WTF_", "BABEL_", "SESSION_COOKIE_")


def _refuse_unknown(environ: Mapping[str, str], library: set[str]) -> None:
    """An SVC_* variable that names no setting is a misspelt one: stop, naming it (and the
    setting it is closest to), rather than start without what the operator meant."""
    known = {*DEFAULTS, *RENAMED, *library, "INSTANCE_PATH", "SECRET_KEY"}
    for variable in sorted(environ):
        if not variable.startswith("SVC_") or NOT_SETTINGS.fullmatch(variable):
            continue
        name = variable.removeprefix("SVC_").split("__", 1)[0]  # SVC_A__B sets A's key B
        if name in known or name.startswith(LIBRARY_PREFIXES):
            continue
        close = difflib.get_close_matches(name, list(DEFAULTS), n=1)
        raise SettingError(f"{variable}: there is no such setting"
                           + (f"; did you mean SVC_{close[0]}?" if close else "."))


def _secret_key(app: Flask) -> None:
    if not app.config.get("SECRET_KEY"):
        if app.config["ENV"] == "production":
            raise SettingError("SVC_SECRET_KEY is required when SVC_ENV=production.")
        app.config["SECRET_KEY"] = _instance_secret(app)


def _derive(app: Flask, settings: Settings) -> None:
    """The library settings that follow from the service's."""
    config = app.config
    if "SQLALCHEMY_DATABASE_URI" not in config:  # (a test may set it; then no file is made)
        config["SQLALCHEMY_DATABASE_URI"] = database_url(app)
    # Test each pooled connection before use, so the service recovers by itself once a
    # database that went away is back.
    config.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {"pool_pre_ping": True})
    # Limits count in the database (app/web/limit_storage.py), which every worker and instance
    # shares and no recycled worker forgets; with Redis, there and, while it fails, in the
    # database; failing closed, a failing Redis answers 503.
    redis_url, fail_closed = settings.redis_url, settings.ratelimit_fail_closed
    config["RATELIMIT_STORAGE_URI"] = (
        redis_url if redis_url and fail_closed else storage_uri(redis_url))
    # A Redis that accepts connections but never answers must cost half a second, not redis-py's
    # default 5 s per call, before the limiter turns to the database.
    if redis_url:
        config.setdefault("RATELIMIT_STORAGE_OPTIONS",
                          {"socket_timeout": 0.5, "socket_connect_timeout": 0.5})
    config["RATELIMIT_HEADERS_ENABLED"] = False  # 429s carry Retry-After from our own handler
    config["RATELIMIT_SWALLOW_ERRORS"] = not fail_closed
    config["RATELIMIT_IN_MEMORY_FALLBACK_ENABLED"] = False  # one worker's memory: see above
    config["RATELIMIT_KEY_PREFIX"] = "svc-auth"
    # The browser session (pending provider sign-ins, later the hosted pages): __Host- prefixed
    # and Secure whenever the service is reached over https.
    https = settings.public_url.startswith("https://")
    config["SESSION_COOKIE_NAME"] = "__Host-svc_session" if https else "svc_session"
    config["SESSION_COOKIE_SECURE"] = https
    config["SESSION_COOKIE_HTTPONLY"] = True
    config["SESSION_COOKIE_SAMESITE"] = "Lax"
    config["SESSION_COOKIE_PATH"] = "/"
    config["PERMANENT_SESSION_LIFETIME"] = settings.refresh_idle_ttl
    # CSRF: a token in every form, bound to the session. No Referer check: our pages send
    # Referrer-Policy: no-referrer, so browsers send none.
    config["WTF_CSRF_SSL_STRICT"] = False
    config["WTF_CSRF_TIME_LIMIT"] = None


def _instance_secret(app: Flask) -> str:
    """One random secret per instance folder, shared by every worker of the embedded default."""
    path = Path(app.instance_path) / "secret-key"
    return create_once(path, lambda: secrets.token_urlsafe(48).encode()).decode()
