"""The captcha providers and the one call to their siteverify endpoint. What a token's answer
means, and what is refused, is the domain's (app/domain/limits/captcha.py)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import requests

log = logging.getLogger("svc_auth.captcha")


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


def siteverify(verify_url: str, secret: str, token: str, remote_ip: str | None, *,
               timeout: float) -> dict[str, Any] | None:
    """The provider's answer, or None when it gave none we can read in time."""
    form = {"secret": secret, "response": token}
    if remote_ip:
        form["remoteip"] = remote_ip
    try:
        answer = requests.post(verify_url, data=form, timeout=timeout)
        answer.raise_for_status()
        body = answer.json()
    except (requests.RequestException, ValueError) as error:
        log.error("captcha provider unavailable: %s", type(error).__name__)
        return None
    return body if isinstance(body, dict) else None
