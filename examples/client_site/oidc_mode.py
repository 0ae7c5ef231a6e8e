"""The example site's second way in: standard OpenID Connect with a stock client (authlib's Flask
client), instead of the service's JS kit and its handoff. Nothing here knows svc-auth beyond its
issuer URL and this site's client id: authlib reads the discovery document, sends the browser
to the hosted login with PKCE S256, a state and a nonce, redeems the code, checks the ID token
(signature from the JWKS, issuer, audience, nonce, at_hash) and calls userinfo.

The tokens stay on the server (in memory, keyed by a random id in the site's session cookie):
the browser never holds them in this mode.

Register the callback (and /oidc, where the service's logout sends people back) with the
service, e.g. in SVC_CLIENT_SITES:
    "symbols": {"redirect_uris": ["http://127.0.0.1:8001/auth/callback",
                                  "http://127.0.0.1:8001/oidc/callback"],
                "post_logout_redirect_uris": ["http://127.0.0.1:8001/oidc"], ...}
A confidential site sets OIDC_CLIENT_SECRET (from `flask sites add --confidential`).
"""

from __future__ import annotations

import secrets
import threading
from typing import Any
from urllib.parse import urlencode

from authlib.integrations.flask_client import OAuth
from flask import Flask, Response, redirect, render_template, session, url_for

_TOKENS = "client_site_oidc_tokens"


def register(app: Flask, service_url: str, client_id: str, client_secret: str | None) -> None:
    oauth = OAuth(app)
    oauth.register(
        "svc", client_id=client_id, client_secret=client_secret,
        server_metadata_url=f"{service_url}/.well-known/openid-configuration",
        client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256",
                       "token_endpoint_auth_method":
                           "client_secret_basic" if client_secret else "none"})
    tokens: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    app.extensions[_TOKENS] = tokens

    def held() -> dict[str, Any] | None:
        with lock:
            return tokens.get(session.get("oidc", ""))

    @app.get("/oidc/login")
    def oidc_login() -> Response:
        return oauth.svc.authorize_redirect(url_for("oidc_callback", _external=True))

    @app.get("/oidc/callback")
    def oidc_callback() -> Response:
        token = oauth.svc.authorize_access_token()  # the ID token is checked here
        key = secrets.token_urlsafe(32)
        with lock:
            tokens[key] = token
        session["oidc"] = key
        return redirect(url_for("oidc_home"))

    @app.get("/oidc")
    def oidc_home() -> str:
        token = held()
        person = dict(oauth.svc.userinfo(token=token)) if token else None
        return render_template("oidc.html", page="oidc", person=person,
                               site=app.config["SITE"], brand=app.config["BRAND"],
                               kind=app.config["KIND"], pricing_url=app.config["PRICING_URL"],
                               service_url=service_url)

    @app.get("/oidc/logout")
    def oidc_logout() -> Response:
        token = held()
        with lock:
            tokens.pop(session.pop("oidc", ""), None)
        if token is None:
            return redirect(url_for("oidc_home"))
        # RP-initiated logout: the service ends its session too, and sends the browser back
        # here if this URL is one of the site's post_logout_redirect_uris.
        end = oauth.svc.load_server_metadata()["end_session_endpoint"]
        return redirect(f"{end}?" + urlencode({
            "id_token_hint": token["id_token"],
            "post_logout_redirect_uri": url_for("oidc_home", _external=True)}))
