"""Rate limits on the credential endpoints, shared by v1, v2 and the hosted forms: each limit has
one scope, so both API versions' logins draw on the same counters.
Why: docs/architecture/design-notes.md, "Rate limits and their storage"."""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable
from functools import partial, wraps
from typing import Any

from flask import Flask, Response, after_this_request, current_app, request
from flask_limiter.util import get_qualified_name
from flask_login import current_user
from redis import RedisError

from app.domain.addresses import key as email_key
from app.domain.clients import service_clients
from app.domain.device_names import network_key
from app.domain.errors import AuthError
from app.extensions import limiter
from app.infra.settings import KEY, names
from app.web.bearer import bearer_token, current_bearer
from app.web.client import client_ip

log = logging.getLogger("svc_auth.ratelimits")


def retry_after() -> int:
    """Seconds until the limit this request broke lets it through again, for a 429.

    Read from the limit's storage; if that fails now (Redis gone between counting the request
    and this answer), the limit's whole period: a 429 must never become a 500.
    """
    current = limiter.current_limit
    if current is None:
        return 60
    try:
        reset_at = current.window[0]
    except (RedisError, OSError) as error:
        log.error("redis unavailable: Retry-After is the limit's whole period (%s)",
                  type(error).__name__)
        return int(current.limit.get_expiry())
    return max(1, math.ceil(reset_at - time.time()))


def limit_key_ip() -> str:
    """The client's address as limits count it: IPv6 by its /64."""
    return network_key(client_ip())


# A body without an email (refused with 422 anyway) still counts, against its own address
# only: flask-limiter skips a limit whose key is empty, and one shared key would let anyone
# use up everyone's.
NO_EMAIL = "-"


def _untrusted_email() -> str:
    """The email in the body, by its key, for use as a counter key only."""
    try:
        data = json.loads(request.get_data(cache=True)) if request.is_json else request.form
    except (ValueError, RecursionError):
        data = None
    untrusted = data.get("email") if isinstance(data, dict) else None  # a MultiDict is a dict
    key = email_key(untrusted)[:320] if isinstance(untrusted, str) else ""
    return key or f"{NO_EMAIL}|{limit_key_ip()}"


def _ip_and_email() -> str:
    return f"{limit_key_ip()}|{_untrusted_email()}"


def _signed_in_user() -> str:
    """The account of the signed-in browser (@login_required runs before these limits)."""
    account = getattr(current_user, "user", None)
    return f"user|{account.id}" if account is not None else f"ip|{limit_key_ip()}"


def _browser_session() -> str:
    return f"session|{current_user.get_id()}"


def _admin_caller() -> str:
    """The service client of a valid admin token; the address for anything else."""
    try:
        caller = service_clients.caller_of(bearer_token())
    except AuthError:
        caller = None
    return f"client|{caller}" if caller else f"ip|{limit_key_ip()}"


def _bearer_account() -> str:
    """The account of the request's access token; the address for a request without one."""
    try:
        return f"user|{current_bearer().account.id}"
    except AuthError:
        return f"ip|{limit_key_ip()}"


def _setting(name: str) -> Callable[[], str]:
    """The limit setting `name`, read at each request (a test may change it); a name that is
    no setting fails here, when the views are defined."""
    if name not in names():
        raise ValueError(f"{name} is no setting")
    field = name.lower()  # read without a call of ours: every limited request reads it
    return lambda: getattr(current_app.extensions[KEY], field)


# Every view that has a limit gets it through _limits; no limit applies to the whole app. The
# limiter's own work on a request to any other view finds nothing to count, yet took about a
# third of a verify's CPU time (bench/verify_costs.py): those requests skip its hooks
# (only_on_limited_views). A request filter would not do: the limiter asks it halfway through.
_LIMITED_VIEWS: set[str] = set()
_unlimited_endpoints: dict[str, bool] = {}


def _no_limit_on_this_view() -> bool:
    endpoint = request.endpoint or ""
    unlimited = _unlimited_endpoints.get(endpoint)
    if unlimited is None:
        view = current_app.view_functions.get(endpoint)
        unlimited = view is None or get_qualified_name(view) not in _LIMITED_VIEWS
        _unlimited_endpoints[endpoint] = unlimited
    return unlimited


def only_on_limited_views(app: Flask) -> None:
    """flask-limiter's before- and after-request hooks, which it registers for every request,
    return at once on a view that no limit names (a quarter of a verify's CPU time otherwise)."""
    check = limiter._check_request_limit
    before = app.before_request_funcs.get(None, [])
    if check not in before:
        return  # the limits are off (SVC_RATELIMIT_ENABLED): the limiter added no hook
    before[before.index(check)] = _before_limited_views(check)
    after = app.after_request_funcs[None]
    inject = next(hook for hook in after if isinstance(hook, partial)
                  and hook.args == (limiter,) and hook.func.__name__.endswith("inject_headers"))
    after[after.index(inject)] = _after_limited_views(inject)


def _before_limited_views(check: Callable[[], None]) -> Callable[[], None]:
    @wraps(check)
    def check_limited_view() -> None:
        if not _no_limit_on_this_view():
            check()
    return check_limited_view


def _after_limited_views(inject: Callable[[Response], Response]
                         ) -> Callable[[Response], Response]:
    @wraps(inject)
    def inject_on_limited_view(response: Response) -> Response:
        return response if _no_limit_on_this_view() else inject(response)
    return inject_on_limited_view


def _limits(*rules: tuple[str, str, Callable[[], str], dict[str, Any]]) -> Callable[[Any], Any]:
    def decorate(view: Any) -> Any:
        _LIMITED_VIEWS.add(get_qualified_name(view))
        for scope, setting, key_func, options in reversed(rules):
            view = limiter.shared_limit(_setting(setting), scope=scope, key_func=key_func,
                                        **options)(view)
        return view
    return decorate


# Login: attempts per address and email, and per address. Failures per email (NIST 63B's
# throttle against guessing one account's password from many addresses) are counted in the
# database, by app/domain/limits/throttle.py.
login = _limits(
    ("login-ip-email", "LIMIT_LOGIN", _ip_and_email, {}),
    ("login-ip", "LIMIT_LOGIN_IP", limit_key_ip, {}),
)


_signup_limit = _limits(("signup-ip", "LIMIT_SIGNUP", limit_key_ip, {}))


def signup(view: Any) -> Any:
    """The sign-up limit: counted before the view, as every limit is, so that concurrent
    requests from many instances never pass more than the limit between them; then given back
    for a form refused for an error its sender can correct. What still counts is what cost us
    something (an account made, a mail sent) or told whether an address has an account (409:
    the oracle this limit keeps slow); an office behind one address no longer waits an hour for
    a few typos."""
    @wraps(view)
    def refunded_when_correctable(*args: Any, **kwargs: Any) -> Any:
        after_this_request(_refund_correctable_signup)
        return view(*args, **kwargs)
    return _signup_limit(refunded_when_correctable)


def _refund_correctable_signup(response: Response) -> Response:
    status = response.status_code
    if status < 400 or status in (409, 429):
        return response
    try:
        for counted in limiter.current_limits:
            if "signup-ip" in counted.request_args:
                counted.limiter.hit(counted.limit, *counted.request_args, cost=-1)
    except (RedisError, OSError):
        pass  # the count stays one too high for its window: safe, and the answer stands
    return response
refresh = _limits(("refresh-ip", "LIMIT_REFRESH", limit_key_ip, {}))
exchange = _limits(("exchange-ip", "LIMIT_EXCHANGE", limit_key_ip, {}))
# The OpenID Connect endpoints of clients (token, revocation, introspection), per address.
oidc_token = _limits(("oidc-token-ip", "LIMIT_OIDC_TOKEN", limit_key_ip, {}))
# The admin API, per service client: a runaway script cannot starve the others.
admin = _limits(("admin-client", "LIMIT_ADMIN", _admin_caller, {}))
# The account's own changes through the API (a new address, leaving: each asks the password,
# whose wrong guesses are also counted per account in the database), and its data export.
account_change = _limits(("account-change-user", "LIMIT_LOGIN", _bearer_account, {}))
export = _limits(("export-user", "LIMIT_EXPORT", _bearer_account, {}))
export_page = _limits(("export-user", "LIMIT_EXPORT", _signed_in_user, {}))
# Mail-sending endpoints: per email (no one gets bombarded), and per IP.
forgot = _limits(("forgot-email", "LIMIT_FORGOT", _untrusted_email, {}),
                 ("forgot-ip", "LIMIT_FORGOT_IP", limit_key_ip, {}))
resend_confirmation = _limits(("resend-email", "LIMIT_FORGOT", _untrusted_email, {}),
                              ("resend-ip", "LIMIT_FORGOT_IP", limit_key_ip, {}))
reset = _limits(("reset-ip", "LIMIT_RESET", limit_key_ip, {}))
# Sign-in codes by mail: mails per recipient and per address, as the reset's; their tries as
# sign-ins (and at most five per code: accounts/email_codes.py).
email_code = _limits(("email-code-email", "LIMIT_FORGOT", _untrusted_email, {}),
                     ("email-code-ip", "LIMIT_FORGOT_IP", limit_key_ip, {}))
email_code_verify = login
# Signed-in actions on the hosted pages: per account, so no one else can use them up. (Wrong
# current passwords are also counted per account in the database.)
change_password = _limits(("password-change-user", "LIMIT_LOGIN", _signed_in_user, {}))
# Each change is an event every site receives: as many as sign-in attempts, no more.
change_name = _limits(("name-change-user", "LIMIT_LOGIN", _signed_in_user, {}))
# Proving an existing account's password to link a provider (a password guess like any other:
# its failures are also counted per email, in the database).
link_proof = _limits(("link-proof-ip", "LIMIT_LOGIN", limit_key_ip, {}))
# A second factor's code (wrong ones are also counted per account and per pending sign-in, in
# the database: app/domain/factors/second_factors.py).
second_factor = _limits(("second-factor-ip", "LIMIT_LOGIN", limit_key_ip, {}))
# Passkeys: a ceremony's options (each a challenge row; the login page asks for one as it loads,
# for autofill), and the answers (a signature cannot be guessed; each answer spends a challenge).
passkey_options = _limits(("passkey-options-ip", "LIMIT_PASSKEY_OPTIONS", limit_key_ip, {}))
passkey = _limits(("passkey-ip", "LIMIT_LOGIN_IP", limit_key_ip, {}))
resend_my_confirmation = _limits(("resend-user", "LIMIT_FORGOT", _signed_in_user, {}),
                                 ("resend-ip", "LIMIT_FORGOT_IP", limit_key_ip, {}))


def single_sign_on(exempt_when: Callable[[], bool]) -> Callable[[Any], Any]:
    """Handoff codes issued to one signed-in browser session; `exempt_when` tells the requests
    that issue none."""
    return _limits(("sso-session", "LIMIT_SSO", _browser_session, {"exempt_when": exempt_when}))


def announce_limits(response: Response) -> Response:
    """On a successful answer of a limited view, the IETF draft's RateLimit-Limit,
    RateLimit-Remaining and RateLimit-Reset (seconds) of the limit closest to running out, so that
    a client slows down before a 429 (which carries Retry-After instead). Nothing when the
    limit's storage cannot say now: the answer matters more than the hint."""
    if response.status_code >= 400 or _no_limit_on_this_view():
        return response
    try:
        counted = [(limit.remaining, limit.reset_at, limit.limit.amount,
                    limit.limit.get_expiry()) for limit in limiter.current_limits]
    except (RedisError, OSError):
        return response
    if not counted:
        return response
    remaining, reset_at, amount, period = min(counted)
    response.headers["RateLimit-Limit"] = str(amount)
    response.headers["RateLimit-Remaining"] = str(max(0, remaining))
    # Within the limit's period: a window's start may be rounded past this instant.
    reset = min(int(period), math.ceil(reset_at - time.time()))
    response.headers["RateLimit-Reset"] = str(max(0, reset))
    return response
