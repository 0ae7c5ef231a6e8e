"""Settings: defaults, then SVC_* environment variables, then the caller's overrides.

Read once in the app factory, never at import time. What each setting means is in
app/config_reference.py, from which docs/operators/configuration.md is generated.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from flask import Flask
from limits import parse

from app.database_choice import database_url
from app.domain.accounts.plans import DEFAULT_CATALOGUE
from app.domain.accounts.plans import check_settings as check_plans
from app.domain.clients.registration import check_settings as check_client_sites
from app.domain.clock import system_clock
from app.domain.limits.captcha import check_settings as check_captcha
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
    # The outbox (app/infra/outbox_worker.py): attempts per mail job, the first delay between two
    # (doubled after each; 10 attempts span about 17 minutes), how often each process looks for
    # due jobs, how long a claimed job is a worker's before another may take it (longer than a
    # send can take), and how many days finished jobs are kept (`flask outbox purge`).
    "MAIL_ATTEMPTS": 10,
    "MAIL_RETRY_DELAY": 2.0,
    "MAIL_POLL_SECONDS": 1.0,
    "MAIL_LEASE_SECONDS": 120,
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
    # Plans (app/domain/accounts/plans.py): the plans there are, comma-separated, and the plan of
    # a new account that is given none (one of PLANS).
    "PLANS": DEFAULT_CATALOGUE,
    "DEFAULT_PLAN": "free",
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


def load(app: Flask, overrides: dict[str, Any] | None) -> None:
    app.config.from_mapping(DEFAULTS)
    app.config.from_prefixed_env("SVC")
    for key in _CODE_ONLY:
        app.config[key] = DEFAULTS[key]
    if overrides:
        app.config.update(overrides)
    _derive(app)
    _check(app.config)


def _derive(app: Flask) -> None:
    """Fill in the settings that follow from others, and the library settings they map to."""
    config = app.config
    config["PUBLIC_URL"] = str(config["PUBLIC_URL"]).rstrip("/")
    if "SQLALCHEMY_DATABASE_URI" not in config:  # (a test may set it; then no file is made)
        config["SQLALCHEMY_DATABASE_URI"] = database_url(app)
    # Test each pooled connection before use, so the service recovers by itself once a
    # database that went away is back.
    config.setdefault("SQLALCHEMY_ENGINE_OPTIONS", {"pool_pre_ping": True})
    # Limits count in the database (app/web/limit_storage.py), which every worker and instance
    # shares and no recycled worker forgets; with Redis, there and, while it fails, in the
    # database; failing closed, a failing Redis answers 503.
    redis_url, fail_closed = config["REDIS_URL"], config["RATELIMIT_FAIL_CLOSED"]
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
    https = config["PUBLIC_URL"].startswith("https://")
    config["SESSION_COOKIE_NAME"] = "__Host-svc_session" if https else "svc_session"
    config["SESSION_COOKIE_SECURE"] = https
    config["SESSION_COOKIE_HTTPONLY"] = True
    config["SESSION_COOKIE_SAMESITE"] = "Lax"
    config["SESSION_COOKIE_PATH"] = "/"
    config["PERMANENT_SESSION_LIFETIME"] = int(config["REFRESH_IDLE_TTL"])
    # CSRF: a token in every form, bound to the session. No Referer check: our pages send
    # Referrer-Policy: no-referrer, so browsers send none.
    config["WTF_CSRF_SSL_STRICT"] = False
    config["WTF_CSRF_TIME_LIMIT"] = None
    if not config.get("SECRET_KEY"):
        if config["ENV"] == "production":
            raise RuntimeError("SVC_SECRET_KEY is required when SVC_ENV=production.")
        config["SECRET_KEY"] = _instance_secret(app)


def _instance_secret(app: Flask) -> str:
    """One random secret per instance folder, shared by every worker of the embedded default."""
    path = Path(app.instance_path) / "secret-key"
    return create_once(path, lambda: secrets.token_urlsafe(48).encode()).decode()


def _check_limits(config: dict[str, Any]) -> None:
    for name in ("LIMIT_LOGIN_FAILURES", "LIMIT_PASSWORD_CHANGE_FAILURES",  # the database's
                 "LIMIT_SECOND_FACTOR_FAILURES", "CAPTCHA_LOGIN_FAILURES"):
        try:
            parse(str(config[name]))
        except ValueError:
            raise RuntimeError(f"SVC_{name} must be one limit, such as \"100 per day\".") from None


# Outside production an access token may live a few seconds, so that a client site's developer
# sees their refresh logic work without waiting a minute.
SHORTEST_ACCESS_TOKEN_TTL = {"production": 60, "otherwise": 5}


def _check_access_token_ttl(config: dict[str, Any]) -> None:
    where = "production" if config["ENV"] == "production" else "otherwise"
    shortest = SHORTEST_ACCESS_TOKEN_TTL[where]
    if not shortest <= int(config["ACCESS_TOKEN_TTL"]) <= 3600:
        raise RuntimeError(
            f"SVC_ACCESS_TOKEN_TTL must be between {shortest} and 3600 seconds"
            + (" when SVC_ENV=production." if where == "production" else
               " (60 when SVC_ENV=production)."))


def _check(config: dict[str, Any]) -> None:
    """Refuse to start with settings that would make the service unsafe or broken."""
    if config["JWT_ALG"] not in ("ES256", "EdDSA", "RS256", "HS256"):
        raise RuntimeError("SVC_JWT_ALG must be ES256, EdDSA, RS256 or HS256.")
    _check_access_token_ttl(config)
    if int(config["REFRESH_IDLE_TTL"]) > int(config["REFRESH_MAX_TTL"]):
        raise RuntimeError("SVC_REFRESH_IDLE_TTL cannot exceed SVC_REFRESH_MAX_TTL.")
    if config["ADMIN_AUDIENCE"] == config["JWT_AUDIENCE"]:
        raise RuntimeError("SVC_ADMIN_AUDIENCE must differ from SVC_JWT_AUDIENCE: a client's "
                           "own token would pass for a person's at every client site.")
    if not 0 <= int(config["REFRESH_REUSE_GRACE"]) <= 60:
        raise RuntimeError("SVC_REFRESH_REUSE_GRACE must be between 0 and 60 seconds.")
    for name in ("AUDIT_RETENTION_DAYS", "CODE_RETENTION_HOURS"):
        if int(config[name]) < 0:
            raise RuntimeError(f"SVC_{name} cannot be negative.")
    for name in ("PUSHED_REQUESTS_PER_CLIENT", "PUSHED_REQUESTS_PER_ADDRESS"):
        if int(config[name]) < 1:
            raise RuntimeError(f"SVC_{name} must be at least 1.")
    _check_limits(config)
    check_captcha(config)
    check_plans(config)
    check_client_sites(config["CLIENT_SITES"],
                       reserved=(config["JWT_AUDIENCE"], config["ADMIN_AUDIENCE"]),
                       production=config["ENV"] == "production")
    if config["ENV"] != "production":
        return
    if not str(config["PUBLIC_URL"]).startswith("https://"):
        raise RuntimeError("SVC_PUBLIC_URL must be https when SVC_ENV=production.")
    if str(config["MAIL_URL"]).startswith(("console:", "memory:")):
        raise RuntimeError("SVC_MAIL_URL must be smtp://, smtps:// or file:// in production:"
                           " console:// writes reset links to the log.")
