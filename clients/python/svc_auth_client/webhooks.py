"""Webhooks from svc-auth, for Flask sites: the service signs each delivery by the Standard
Webhooks specification, and the `standardwebhooks` package checks it.

    @app.post("/webhooks/svc-auth")
    def account_events():
        event = verified_event(WEBHOOK_SECRET)  # 400 unless the service signed this body
        ...

The same `webhook-id` comes again on a retry: act on an event once.
"""

from __future__ import annotations

from typing import Any

from flask import abort, request
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError


def verified_event(secret: str) -> dict[str, Any]:
    """The request's event (`type`, `id`, `timestamp`, `data` with `user_id`...) once its
    signature, made with `secret` (whsec_...), and its timestamp (five minutes either way)
    check out; a 400 otherwise."""
    try:
        event: dict[str, Any] = Webhook(secret).verify(request.get_data(), dict(request.headers))
    except (WebhookVerificationError, ValueError):
        abort(400, "The webhook's signature does not verify.")
    return event
