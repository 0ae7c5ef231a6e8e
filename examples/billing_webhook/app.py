"""A billing webhook for svc-auth: the payment provider's "subscription changed" event puts the
account on its plan through the admin API (PATCH /api/admin/v1/users/{id}, scope users:plan).

    SVC_AUTH_URL=https://auth.example SVC_CLIENT_ID=billing SVC_CLIENT_SECRET=... \
    BILLING_WEBHOOK_SECRET=... flask --app examples/billing_webhook/app.py run --port 8003

It answers 200 once the plan is set (a redelivery sets the same plan again: harmless), 4xx for an
event it cannot use (a retry would not help), 5xx when svc-auth did not set it (the provider
retries later).
"""

from __future__ import annotations

import hmac
import os
import threading
import time
from collections.abc import Mapping
from urllib.parse import quote

import requests
from flask import Flask, Request, Response, jsonify, request

HANDLED = {"customer.subscription.updated"}
TIMEOUT = 10  # seconds per call to svc-auth: less than the provider waits for our answer
EARLY = 60  # seconds: a token is replaced this long before it expires
clock = time.monotonic


def verify_signature(req: Request, secret: str) -> bool:
    """REPLACE THIS with your provider's own check (most sign the raw body with an HMAC and a
    timestamp, e.g. Stripe's Stripe-Signature header). Until then: a shared secret in the
    X-Billing-Secret header, compared in constant time."""
    sent = req.headers.get("X-Billing-Secret", "")
    return bool(secret) and hmac.compare_digest(sent.encode(), secret.encode())


class AdminApi:
    """svc-auth's admin API with a client_credentials token, kept until shortly before it
    expires (one token for every event, not one per event)."""

    def __init__(self, url: str, client_id: str, client_secret: str) -> None:
        self.url, self.credentials = url.rstrip("/"), (client_id, client_secret)
        self.http = requests.Session()
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0

    def token(self, refused: str | None = None) -> str:
        """The kept token, or a new one when it is due or `refused` (it was answered 401)."""
        with self._lock:
            if self._token is None or self._token == refused or clock() >= self._renew_at:
                answer = self.http.post(
                    f"{self.url}/oauth2/token", auth=self.credentials, timeout=TIMEOUT,
                    data={"grant_type": "client_credentials", "scope": "users:plan"})
                answer.raise_for_status()
                issued = answer.json()
                lifetime = float(issued["expires_in"])
                self._token = str(issued["access_token"])
                self._renew_at = clock() + lifetime - min(EARLY, lifetime / 2)
            return self._token

    def set_plan(self, user_id: str, plan: str, event_id: str) -> requests.Response:
        token = self.token()
        answer = self._patch(token, user_id, plan, event_id)
        if answer.status_code == 401:  # the kept token stopped working (a revoked signing key)
            answer = self._patch(self.token(refused=token), user_id, plan, event_id)
        return answer

    def _patch(self, token: str, user_id: str, plan: str, event_id: str) -> requests.Response:
        return self.http.patch(
            f"{self.url}/api/admin/v1/users/{quote(user_id, safe='')}", json={"plan": plan},
            # The event id as Idempotency-Key: a redelivered event gets the first answer back
            # and changes nothing, so it cannot undo a later plan change (svc-auth keeps keys
            # on every admin write for a day).
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": event_id},
            timeout=TIMEOUT)


def create_app(env: Mapping[str, str] = os.environ) -> Flask:
    """The webhook; settings from `env`: SVC_AUTH_URL, SVC_CLIENT_ID, SVC_CLIENT_SECRET and
    BILLING_WEBHOOK_SECRET (all required: a KeyError names the missing one)."""
    app = Flask(__name__)
    api = AdminApi(env["SVC_AUTH_URL"], env["SVC_CLIENT_ID"], env["SVC_CLIENT_SECRET"])
    secret = env["BILLING_WEBHOOK_SECRET"]
    app.extensions["svc_admin_api"] = api

    @app.post("/webhooks/billing")
    def billing_event() -> tuple[Response, int]:
        if not verify_signature(request, secret):
            return jsonify(error="bad signature"), 401
        event = request.get_json(silent=True)
        data = event.get("data") if isinstance(event, dict) else None
        if not (isinstance(data, dict) and _text(event.get("id")) and _text(event.get("type"))
                and _text(data.get("svc_user_id")) and _text(data.get("plan"))):
            return jsonify(error="malformed event"), 400
        if event["type"] not in HANDLED:  # another event sent here: nothing to do, no retry
            return jsonify(ignored=event["type"]), 200
        try:
            answer = api.set_plan(data["svc_user_id"], data["plan"], event["id"])
        except (requests.RequestException, ValueError, KeyError) as error:  # no token, no answer
            app.logger.warning("svc-auth failed for %s: %r", event["id"], error)
            return jsonify(error="svc-auth could not be asked, retry later"), 503
        if answer.status_code == 200:
            return jsonify(user_id=data["svc_user_id"], plan=data["plan"]), 200
        app.logger.warning("svc-auth answered %s for %s: %s", answer.status_code, event["id"],
                           answer.text[:500])
        if answer.status_code in (404, 422):  # no such account, or not a plan name
            return jsonify(error="svc-auth refused the event", status=answer.status_code), 422
        return jsonify(error="svc-auth did not set the plan, retry later"), 502

    return app


def _text(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 255
