"""authlib's authorization server, on the service's records.

authlib parses the requests, authenticates clients (client_secret_basic, client_secret_post,
or none for a public client), checks redirect URIs, scopes, PKCE, nonce and prompt, shapes the
errors (RFC 6749 JSON at the token endpoint; a redirect only to a validated redirect URI) and
the endpoints of RFC 7009, RFC 7662 and RP-initiated logout. What it decides on is the domain's
(domain/oidc/, domain/sessions/sessions.py), through the modules beside this one: the clients
(app/oidc/clients.py), the grants (grants.py), the other endpoints (endpoints.py) and pushed
requests (pushed.py).
"""

from __future__ import annotations

from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2.requests import FlaskOAuth2Request
from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import OAuth2Error
from flask import Flask, Response, current_app, jsonify
from flask import request as flask_request

from app.domain.oidc import pushed_requests
from app.oidc.clients import TOKEN_AUTH_METHODS, query_client
from app.oidc.endpoints import EndSession, Introspection, Revocation
from app.oidc.grants import ClientGrant, CodeGrant, OpenIDConnect, RefreshGrant, S256Only
from app.oidc.pushed import Pushed, pushed_params

SERVER_KEY = "svc-oidc-server"


class Server(AuthorizationServer):  # type: ignore[misc]
    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        """The request given (a pushed one), or Flask's."""
        if isinstance(request, OAuth2Request):
            return request
        return super().create_oauth2_request(request)


def build(app: Flask) -> AuthorizationServer:
    server = Server(app, query_client=query_client, save_token=lambda *_: None)
    server.register_grant(CodeGrant, [S256Only(required=True), OpenIDConnect()])
    server.register_grant(RefreshGrant)
    server.register_grant(ClientGrant)
    server.register_endpoint(Revocation)
    server.register_endpoint(Introspection)
    server.register_endpoint(EndSession)
    return server


def server() -> AuthorizationServer:
    found: AuthorizationServer = current_app.extensions[SERVER_KEY]
    return found


def push_authorization_request(validate_params: Any) -> Response:
    """RFC 9126 §2: authenticate the client, validate its authorization request as the
    authorization endpoint would (and `validate_params` what authlib leaves to us), keep it,
    and answer its request_uri. Errors are RFC 6749 JSON, never a redirect."""
    server_ = server()
    sent = FlaskOAuth2Request(flask_request)
    try:
        client = server_.authenticate_client(sent, TOKEN_AUTH_METHODS, "pushed_authorization")
        params = pushed_params(client)
        pushed = Pushed(params, None)
        grant = server_.get_authorization_grant(pushed)
        grant.validate_authorization_request()
        validate_params(params)
    except OAuth2Error as error:
        error.redirect_uri = None
        response: Response = server_.handle_error_response(sent, error)
    else:
        response = jsonify(request_uri=pushed_requests.push(client.client_id, params),
                           expires_in=int(pushed_requests.TTL.total_seconds()))
        response.status_code = 201
    response.headers["Cache-Control"] = "no-store"
    return response
