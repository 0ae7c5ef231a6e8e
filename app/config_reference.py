"""What each setting means, in the operator's words: the configuration reference
(docs/operators/configuration.md) is generated from this table and app/config.py's DEFAULTS by
`scripts/settings-reference`, and tests/unit/test_config_reference.py fails when a setting has no
description here, or the committed page is not what the code generates.

A new setting: its default in DEFAULTS, its typed field in app/infra/settings.py's Settings, one
line here, then `scripts/settings-reference`.
"""

from __future__ import annotations

import json
from typing import Any

from app.config import _CODE_ONLY, DEFAULTS

PREFIX = "SVC_"

# Read before the settings are (by the app factory), or with no default in DEFAULTS: the shown
# default is said in words.
OUTSIDE_DEFAULTS: dict[str, str] = {
    "INSTANCE_PATH": "`instance/` in the checkout",
    "SECRET_KEY": "a random key, created once in the instance folder",
}

DESCRIPTIONS: dict[str, str] = {
    "INSTANCE_PATH": "Where the embedded default keeps its SQLite database, signing keys and "
                     "secret key (created readable by its owner alone).",
    "SECRET_KEY": "Signs the browser session and seals kept secrets (webhook secrets, a mail "
                  "job's link). Required in production: 48 or more random bytes.",
    "ENV": "`production` requires `SVC_SECRET_KEY`, an https `SVC_PUBLIC_URL` and real mail; "
           "anything else is development.",
    "BRAND": "The brand word: the browser storage keys `{brand}_access_token` and "
             "`{brand}_refresh_token`, the sender's name, and a word no password may be.",
    "PUBLIC_URL": "The service's address as people reach it: the issuer (`iss`), the base of "
                  "links in mail, and the passkeys' relying party (its host must be a name, "
                  "such as `localhost`, never an IP address, for passkeys to be offered).",
    "DATABASE_URL": "The database, e.g. `postgresql+psycopg://user:pass@host/db`. Unset: a "
                    "SQLite file `svc-auth.db` in the instance folder.",
    "CLIENT_SITES": "The client sites as JSON: `{\"name\": {\"redirect_uris\": [...], "
                    "\"origins\": [...]}}`, plus the optional keys of the client sites' guide. "
                    "Sites can also be registered with `flask sites add`.",
    "MAIL_URL": "Where mail goes: `console://` (the log; refused in production, since it would "
                "log reset links), `file:///dir` (one `.eml` per message), "
                "`smtp://user:pass@host:port` (STARTTLS when offered) or `smtps://...`.",
    "MAIL_FROM": "The sender. Unset: `{brand} <no-reply@{host of SVC_PUBLIC_URL}>`.",
    "OUTBOX_POLL_SECONDS": "How often each process's outbox threads (one per lane: mail, "
                           "events) look for due mail jobs and deliveries, in seconds. Was "
                           "`SVC_MAIL_POLL_SECONDS`, still read (with a warning) until 0.3.0.",
    "OUTBOX_LEASE_SECONDS": "How long a claimed mail job or delivery is its worker's before "
                            "another may take it (longer than a send or a site's answer can "
                            "take), in seconds. Was `SVC_MAIL_LEASE_SECONDS`, still read (with "
                            "a warning) until 0.3.0.",
    "MAIL_ATTEMPTS": "Attempts per mail job before it is kept as failed (10 span about 17 "
                     "minutes).",
    "MAIL_RETRY_DELAY": "Seconds before a mail job's second attempt; doubled after each.",
    "MAIL_RETENTION_DAYS": "Days `flask purge` (and `outbox purge`) keeps sent mail jobs.",
    "MAIL_TIMEOUT": "Seconds for one conversation with the mail server.",
    "WEBHOOK_ATTEMPTS": "Attempts per delivery of an event to a site (webhook or back-channel "
                        "logout) before it is kept as failed (25 span about three days).",
    "WEBHOOK_RETRY_DELAY": "Seconds before a delivery's second attempt; doubled after each.",
    "WEBHOOK_RETRY_MAX_DELAY": "The longest wait between two attempts of a delivery, in "
                               "seconds.",
    "WEBHOOK_TIMEOUT": "Seconds a site may take to answer a delivery.",
    "REQUIRE_EMAIL_CONFIRMATION": "Refuse sessions to accounts whose address is not confirmed "
                                  "(403 `email_not_confirmed`); sign-up then answers without "
                                  "tokens.",
    "EMAIL_CODE_SIGN_IN": "Offer signing in with a code (and a link) mailed to the account's "
                          "address, on the hosted login and at `/api/v2/auth/email-code`; "
                          "`false` turns it off everywhere (403 `email_code_off`). A site "
                          "turns it off for its own sign-ins with `email_code_sign_in`.",
    "PLANS": "The plans there are, comma-separated: the command line, the admin API, the "
             "console and sign-up put no account on another (422 `unknown_plan`). Unset or "
             "empty: `free,pro,team`.",
    "DEFAULT_PLAN": "The plan of a new account that is given none (sign-up, a provider's first "
                    "sign-in, `users create`); one of `SVC_PLANS`.",
    "PLAN_NAMES": "What people read for a plan on the account page, as JSON: `{\"pro\": "
                  "{\"en\": \"Pro\", \"de\": \"Profi\"}, \"gold\": \"Gold\"}` (by language, "
                  "else English, else the first; a text alone for every language). Unset: "
                  "free, pro and team have names in every language of the pages; another plan "
                  "shows as its word.",
    "REDIS_URL": "Redis, for several instances: rate limits and the revoked-session set. "
                 "Unset: the database counts the limits and answers every session check.",
    "SESSION_CACHE_SECONDS": "With Redis: how long an instance may answer \"is this session "
                             "live\" from its own cache. Revocations are seen at once; a plan "
                             "or name change within this time.",
    "TRUSTED_PROXIES": "How many proxies' `X-Forwarded-For` and `X-Forwarded-Proto` hops to "
                       "trust (1 behind one reverse proxy).",
    "JWT_ALG": "The access and ID tokens' algorithm: `ES256`, `EdDSA`, `RS256` or `HS256` "
               "(OpenID Connect needs an asymmetric one).",
    "JWT_AUDIENCE": "The `aud` of the family's access tokens.",
    "ADMIN_AUDIENCE": "The `aud` of a client's own token (`client_credentials`, the admin "
                      "API); must differ from `SVC_JWT_AUDIENCE`.",
    "JWT_KEYS": "A JSON list of private keys (PEM; base64url secrets of 32 or more bytes for "
                "HS256): the first signs, the rest only verify. Unset: a keyring in the "
                "instance folder (`flask keys rotate`).",
    "JWT_LEEWAY": "Seconds of clock skew allowed on `exp` and `nbf`.",
    "ACCESS_TOKEN_TTL": "Seconds an access token lives: 60 to 3600 in production; from 5 "
                        "otherwise, so that a site's developer sees refresh work at once.",
    "REFRESH_IDLE_TTL": "Seconds a refresh token may go unused (30 days).",
    "REFRESH_MAX_TTL": "Seconds a session may last however often it refreshes (90 days).",
    "REFRESH_REUSE_GRACE": "Seconds (0 to 60) in which a rotated refresh token presented again "
                           "gets the same successor back instead of revoking the session.",
    "RESET_TOKEN_TTL": "Seconds a password reset link works.",
    "ACCOUNT_DELETION_GRACE_DAYS": "Days a closed account can be restored before `flask purge` "
                                   "erases it.",
    "BROWSER_SESSION_SHORT_SECONDS": "How long a hosted sign-in without \"Keep me signed in\" "
                                     "lasts (its cookie also ends with the browser).",
    "LIMIT_EXPORT": "Data downloads per account (API and account page).",
    "PASSWORD_MIN_LENGTH": "The shortest password, in characters after NFKC normalisation.",
    "PASSWORD_MAX_LENGTH": "The longest password, in characters after NFKC normalisation.",
    "BREACHED_PASSWORDS_URL": "The base address of a breached-password range API "
                              "(`GET {url}/{first 5 hex of the SHA-1}` answering `SUFFIX:COUNT` "
                              "lines), e.g. `https://api.pwnedpasswords.com/range`: a listed "
                              "password is refused at sign-up, reset and change (422 "
                              "`password_breached`). Empty: no lookup.",
    "BREACHED_PASSWORDS_TIMEOUT": "Seconds for one breached-password lookup (above 0, at most "
                                  "10); a lookup that fails or takes longer accepts the "
                                  "password and logs a warning.",
    "ARGON2_MEMORY_COST": "argon2id's memory, in KiB (19 MiB: OWASP's parameters).",
    "ARGON2_TIME_COST": "argon2id's passes.",
    "ARGON2_PARALLELISM": "argon2id's lanes.",
    "RATELIMIT_ENABLED": "`false` turns every rate limit and failure counter off (not the "
                         "second factors').",
    "RATELIMIT_FAIL_CLOSED": "When Redis fails: `false` counts the limits in the database, "
                             "`true` answers the limited endpoints with 503.",
    "LIMIT_LOGIN": "Sign-ins per address and email (v1, v2 and the hosted form); on the "
                   "account page, password changes per account.",
    "LIMIT_LOGIN_IP": "Sign-ins per address, whatever the email.",
    "LIMIT_LOGIN_FAILURES": "Failed sign-ins per email, from devices that never signed in to "
                            "the account, counted in the database.",
    "LOGIN_DELAY_AFTER": "Failures per email and address (or device) before each further one "
                         "makes the pair wait twice as long as the last.",
    "LOGIN_DELAY_MAX": "The longest such wait, in seconds.",
    "LIMIT_PASSWORD_CHANGE_FAILURES": "Wrong current passwords per account on the account page, "
                                      "counted in the database.",
    "LIMIT_SECOND_FACTOR_FAILURES": "Wrong second-factor codes per account, always counted.",
    "MFA_PENDING_ATTEMPTS": "Wrong codes one pending sign-in (an `mfa_token`) may take before "
                            "it ends.",
    "MFA_PENDING_TTL": "Seconds a pending sign-in waits for its second factor.",
    "STEP_UP_SECONDS": "How recent a sign-in (or a fresh code) must be, in seconds, to change "
                       "a factor, link a provider or act in the support console.",
    "LIMIT_SIGNUP": "Sign-ups per address that made an account or found the address taken.",
    "LIMIT_FORGOT": "Reset and confirmation mails per email (per account on the account page); "
                    "address-change mails per recipient.",
    "LIMIT_FORGOT_IP": "Reset and confirmation mail requests per address.",
    "LIMIT_RESET": "Password resets per address.",
    "LIMIT_EXCHANGE": "Handoff code exchanges per address.",
    "LIMIT_REFRESH": "Refreshes per address.",
    "LIMIT_PASSKEY_OPTIONS": "Passkey ceremonies started per address (the login page starts "
                             "one as it loads, for autofill).",
    "LIMIT_SSO": "Handoff codes and authorization codes given to one signed-in browser session "
                 "without a form (single sign-on).",
    "LIMIT_OIDC_TOKEN": "Calls per address to `/oauth2/par`, `/oauth2/token`, `/oauth2/revoke` "
                        "and `/oauth2/introspect` together.",
    "LIMIT_ADMIN": "Admin API calls per service client (per address without a valid token).",
    "PUSHED_REQUESTS_PER_CLIENT": "Pushed authorization requests waiting at once (unused, "
                                  "unexpired) per client; then 429.",
    "PUSHED_REQUESTS_PER_ADDRESS": "Pushed authorization requests of public clients waiting at "
                                   "once per address; then 429.",
    "GOOGLE_CLIENT_ID": "Google sign-in's client id; Google is offered once it and the secret "
                        "are set.",
    "GOOGLE_CLIENT_SECRET": "Google sign-in's client secret.",
    "GOOGLE_METADATA_URL": "Google's discovery document (tests point it at a local OpenID "
                           "Connect server).",
    "GITHUB_CLIENT_ID": "GitHub sign-in's client id; GitHub is offered once it and the secret "
                        "are set.",
    "GITHUB_CLIENT_SECRET": "GitHub sign-in's client secret.",
    "GITHUB_AUTHORIZE_URL": "GitHub's authorization endpoint (tests point it at a stand-in).",
    "GITHUB_TOKEN_URL": "GitHub's token endpoint.",
    "GITHUB_API_URL": "GitHub's API, for the account and its verified addresses.",
    "PROVIDER_TIMEOUT": "Seconds for each call to Google or GitHub.",
    "CAPTCHA_MODE": "`off` (`captcha_token` accepted and ignored), `report` (verified and "
                    "counted, nothing refused) or `on`.",
    "CAPTCHA_PROVIDER": "`turnstile`, `hcaptcha` or `recaptcha`; any mode but `off` needs it, "
                        "its secret and its site key.",
    "CAPTCHA_SECRET": "The provider's secret (production refuses a provider's always-pass "
                      "test secret).",
    "CAPTCHA_SITE_KEY": "The provider's public site key, shown to the widget.",
    "CAPTCHA_VERIFY_URL": "Unset: the provider's siteverify address (tests point it at a "
                          "stand-in).",
    "CAPTCHA_SCRIPT_URL": "Unset: the provider's widget script (the pages' CSP opens to its "
                          "origin).",
    "CAPTCHA_TIMEOUT": "Seconds for one siteverify call (above 0, at most 10).",
    "CAPTCHA_MIN_SCORE": "reCAPTCHA v3: the lowest score accepted.",
    "CAPTCHA_ACTION": "When set, the action every token must carry.",
    "CAPTCHA_LOGIN_FAILURES": "Failed sign-ins for one email (from anywhere) or from one "
                              "address (any email) after which sign-in asks for a captcha.",
    "AUDIT_RETENTION_DAYS": "Days `flask purge` keeps audit events; `0` keeps them all.",
    "CODE_RETENTION_HOURS": "Hours `flask purge` keeps handoff codes and emailed tokens after "
                            "they expire.",
    "LOG_FORMAT": "`json` (one object per line, with the request id) or `text`. Unset: json in "
                  "production, text otherwise.",
    "METRICS_TOKEN": "The bearer token that `/metrics` (Prometheus) asks for. Unset: no "
                     "`/metrics`.",
    "MAX_CONTENT_LENGTH": "The largest request body, in bytes; a larger one is a 413.",
}


def settings() -> list[str]:
    """Every setting the environment may give, in the reference's order."""
    return [*OUTSIDE_DEFAULTS, *(name for name in DEFAULTS if name not in _CODE_ONLY)]


def default_text(name: str) -> str:
    if name in OUTSIDE_DEFAULTS:
        return OUTSIDE_DEFAULTS[name]
    value: Any = DEFAULTS[name]
    if value is None:
        return "unset"
    if isinstance(value, str):
        return f"`{value}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{json.dumps(value)}`"


def reference_table() -> str:
    """The reference's markdown table, one row a setting."""
    rows = ["| Setting | Default | Meaning |", "|---|---|---|"]
    for name in settings():
        description = DESCRIPTIONS[name].replace("|", "\\|")
        rows.append(f"| `{PREFIX}{name}` | {default_text(name)} | {description} |")
    return "\n".join(rows) + "\n"
