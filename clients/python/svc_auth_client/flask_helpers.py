"""Flask guards for client sites: `require_token` and `require_plan`.

    verifier = TokenVerifier(f"{SERVICE}/.well-known/jwks.json", issuer=SERVICE, audience="svc")
    init_app(app, verifier, pricing_url="/pricing", plan_check_url=f"{SERVICE}/api/v2/auth/verify")

    @app.post("/api/generate")
    @require_plan("pro", "team")
    def generate(): ...

    @app.post("/api/delete-everything")
    @require_token(mfa=True)  # only a sign-in that proved a second factor
    def delete_everything(): ...

Refusals are problem+json bodies (RFC 9457) shaped like the service's own:
401 `missing_token` / `invalid_token` / `token_expired` with `WWW-Authenticate: Bearer`,
402 (or 403) `upgrade_required` with a `pricing_url` member, and 403 `mfa_required` for a token
of a sign-in without a second factor where one is required.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, ParamSpec, TypeVar

import requests
from flask import Flask, Response, current_app, g, jsonify, request

from svc_auth_client.errors import KeysUnavailable, MissingToken, TokenError
from svc_auth_client.verify import TokenVerifier

log = logging.getLogger("svc_auth_client")

EXTENSION = "svc_auth_client"
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Settings:
    verifier: TokenVerifier
    pricing_url: str
    plan_check_url: str | None
    timeout: float


def init_app(app: Flask, verifier: TokenVerifier, *, pricing_url: str = "/pricing",
             plan_check_url: str | None = None, timeout: float = 5) -> None:
    """Give the guards their verifier. With `plan_check_url` (the service's
    `/api/v2/auth/verify`), a token whose `plan` claim is refused is asked about once more
    online, so an upgrade counts at once rather than at the person's next refresh."""
    app.extensions[EXTENSION] = Settings(verifier, pricing_url, plan_check_url, timeout)


def _settings() -> Settings:
    settings = current_app.extensions.get(EXTENSION)
    if not isinstance(settings, Settings):
        raise RuntimeError("svc_auth_client.init_app(app, verifier) was not called")
    return settings


def problem(status: int, code: str, detail: str, **extra: Any) -> Response:
    """A problem+json response like the service's."""
    body = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "code": code, "detail": detail, **extra}
    response = jsonify(body)
    response.status_code = status
    response.mimetype = "application/problem+json"
    response.headers["Cache-Control"] = "no-store"
    return response


def bearer_token() -> str:
    """The request's bearer token, "" when it sends none."""
    scheme, _, untrusted_token = request.headers.get("Authorization", "").partition(" ")
    return untrusted_token.strip() if scheme.lower() == "bearer" else ""


def _authenticate() -> Response | None:
    """Put the verified claims in `g`, or the refusal to answer with."""
    if "svc_claims" in g:
        return None
    try:
        g.svc_claims = _settings().verifier.verify(bearer_token())
    except TokenError as error:
        response = problem(401, error.code, error.detail)
        # RFC 6750 §3: no error code when no token came; an expired one is invalid_token too.
        response.headers["WWW-Authenticate"] = (
            "Bearer" if isinstance(error, MissingToken) else 'Bearer error="invalid_token"')
        return response
    except KeysUnavailable as error:
        response = problem(503, error.code, error.detail)
        response.headers["Retry-After"] = "30"
        return response
    return None


def current_claims() -> dict[str, Any]:
    """The claims of the token a guarded view was called with."""
    claims: dict[str, Any] = g.svc_claims
    return claims


def signed_in_with_second_factor(claims: dict[str, Any]) -> bool:
    """Whether the sign-in behind these claims proved a second factor (the service's `acr`
    aal2, or `mfa` in `amr`)."""
    amr = claims.get("amr")
    return claims.get("acr") == "aal2" or (isinstance(amr, list) and "mfa" in amr)


def require_token(view: Callable[P, R] | None = None, *, mfa: bool = False) -> Any:
    """Decorator: the view runs only with a valid access token; 401 otherwise. As
    `require_token(mfa=True)`: only with a token of a sign-in that proved a second factor;
    403 `mfa_required` otherwise (the person signs in again, with it)."""

    def decorate(view: Callable[P, R]) -> Callable[P, R | Response]:
        @functools.wraps(view)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R | Response:
            refusal = _authenticate()
            if refusal is not None:
                return refusal
            if mfa and not signed_in_with_second_factor(current_claims()):
                return problem(403, "mfa_required", "Sign in with your second factor to do "
                                                    "this.")
            return view(*args, **kwargs)

        return guarded

    return decorate(view) if view is not None else decorate


def require_plan(*plans: str, status: int = 402,
                 pricing_url: str | None = None) -> Callable[[Callable[P, R]],
                                                             Callable[P, R | Response]]:
    """Decorator: a valid token (401 otherwise) whose plan is one of `plans`; otherwise
    `status` (402 or 403) with code `upgrade_required` and the `pricing_url`."""
    if not plans:
        raise ValueError("require_plan needs at least one plan")
    if status not in (402, 403):
        raise ValueError("require_plan answers 402 or 403")

    def decorate(view: Callable[P, R]) -> Callable[P, R | Response]:
        @functools.wraps(view)
        def guarded(*args: P.args, **kwargs: P.kwargs) -> R | Response:
            refusal = _authenticate()
            if refusal is not None:
                return refusal
            plan = current_claims()["plan"]
            if plan not in plans:
                plan = _plan_online() or plan
            if plan not in plans:
                settings = _settings()
                return problem(status, "upgrade_required",
                               f"The {plan} plan does not include this. "
                               f"Upgrade to {' or '.join(plans)}.",
                               pricing_url=pricing_url or settings.pricing_url, plans=list(plans))
            g.svc_plan = plan
            return view(*args, **kwargs)

        return guarded

    return decorate


def _plan_online() -> str | None:
    """The account's plan as the service has it now, or None when it cannot tell."""
    settings = _settings()
    if not settings.plan_check_url:
        return None
    try:
        with requests.get(settings.plan_check_url, timeout=settings.timeout,
                          allow_redirects=False,
                          headers={"Authorization": f"Bearer {bearer_token()}"}) as response:
            if response.status_code != 200:
                return None
            plan = response.json().get("user", {}).get("plan")
    except (requests.RequestException, ValueError, AttributeError) as error:
        log.warning("svc-auth plan check failed: %s", type(error).__name__)
        return None
    return plan if isinstance(plan, str) else None
