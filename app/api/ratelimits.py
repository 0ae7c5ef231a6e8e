"""Rate limits on the credential endpoints, shared by v1, v2 (and the hosted forms later).

Each limit has its own scope, so `/api/v1/auth/login` and `/api/v2/auth/login` draw on the same
counters. The limits are read from settings on every request, so tests and operators can change
them without a restart of the code that declares them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask import current_app, request
from flask_limiter.util import get_remote_address

from app.extensions import limiter


def client_ip() -> str:
    return get_remote_address() or "unknown"


NO_EMAIL = "-"  # flask-limiter skips a limit whose key is empty: count these requests together


def _untrusted_email() -> str:
    """The email in the body, folded, for use as a counter key only."""
    try:
        data = json.loads(request.get_data(cache=True)) if request.is_json else request.form
    except (ValueError, RecursionError):
        return NO_EMAIL
    email = data.get("email") if hasattr(data, "get") else None
    folded = email.strip().casefold()[:320] if isinstance(email, str) else ""
    return folded or NO_EMAIL


def _ip_and_email() -> str:
    return f"{client_ip()}|{_untrusted_email()}"


def _setting(name: str) -> Callable[[], str]:
    return lambda: str(current_app.config[name])


def _limits(*rules: tuple[str, str, Callable[[], str], dict[str, Any]]) -> Callable[[Any], Any]:
    def decorate(view: Any) -> Any:
        for scope, setting, key_func, options in reversed(rules):
            view = limiter.shared_limit(_setting(setting), scope=scope, key_func=key_func,
                                        **options)(view)
        return view
    return decorate


def _failed(response: Any) -> bool:
    return bool(response.status_code == 401)


# Login: per address and email; per address; and failures per email from any address (NIST
# 63B's throttle against guessing one account's password from many addresses).
login = _limits(
    ("login-ip-email", "LIMIT_LOGIN", _ip_and_email, {}),
    ("login-ip", "LIMIT_LOGIN_IP", client_ip, {}),
    ("login-failures", "LIMIT_LOGIN_FAILURES", _untrusted_email, {"deduct_when": _failed}),
)
signup = _limits(("signup-ip", "LIMIT_SIGNUP", client_ip, {}))
refresh = _limits(("refresh-ip", "LIMIT_REFRESH", client_ip, {}))
exchange = _limits(("exchange-ip", "LIMIT_EXCHANGE", client_ip, {}))
# Mail-sending endpoints: per email (no one gets bombarded), and per IP.
forgot = _limits(("forgot-email", "LIMIT_FORGOT", _untrusted_email, {}),
                 ("forgot-ip", "LIMIT_FORGOT_IP", client_ip, {}))
resend_confirmation = _limits(("resend-email", "LIMIT_FORGOT", _untrusted_email, {}),
                              ("resend-ip", "LIMIT_FORGOT_IP", client_ip, {}))
reset = _limits(("reset-ip", "LIMIT_RESET", client_ip, {}))
change_password = _limits(("password-change-ip", "LIMIT_LOGIN", client_ip, {}))
# Proving an existing account's password to link a provider: a password guess like any other.
link_proof = _limits(("link-proof-ip", "LIMIT_LOGIN", client_ip, {}))
