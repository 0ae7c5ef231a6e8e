"""authlib's authorization server, on the service's records: authlib handles the protocol, and what
it decides on (clients, codes, sessions, tokens, claims) is the domain's.
Why: docs/architecture/design-notes.md, "OpenID Connect authorization and pushed requests"."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2.requests import FlaskOAuth2Request
from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    ClientMixin,
    InvalidClientError,
    OAuth2Error,
    UnsupportedResponseTypeError,
)
from flask import Flask, Response, current_app, jsonify
from flask import request as flask_request

from app.domain.oidc import pushed_requests
from app.oidc import client_auth, unsupported
from app.oidc.clients import (
    TOKEN_AUTH_METHODS,
    Client,
    query_client,
)
from app.oidc.endpoints import EndSession, Introspection, Revocation
from app.oidc.grants import ClientGrant, CodeGrant, OpenIDConnect, RefreshGrant, S256Only
from app.oidc.pushed import Pushed, pushed_params
from app.web import ratelimits

SERVER_KEY = "svc-oidc-server"


def push_authorization_request(validate_params: Any) -> Response:
    """RFC 9126 §2: authenticate the client, validate its authorization request as the
    authorization endpoint would (and `validate_params` what authlib leaves to us), keep it,
    and answer its request_uri. Errors are RFC 6749 JSON, never a redirect;
    TooManyPushedRequests is the caller's to answer."""
    server_ = server()
    sent = FlaskOAuth2Request(flask_request)
    try:
        client = server_.authenticate_client(sent, TOKEN_AUTH_METHODS, "pushed_authorization")
        assert isinstance(client, Client)  # query_client's
        params = pushed_params(client)
        pushed = Pushed(params, None)
        grant = server_.get_authorization_grant(pushed)
        assert isinstance(grant, CodeGrant)  # the one grant of the authorization endpoint
        grant.validate_authorization_request()
        validate_params(params)
    except OAuth2Error as error:
        error.redirect_uri = None
        response = error_response(error, sent)
    else:
        address = ratelimits.limit_key_ip() if client.site.is_public else None
        response = jsonify(request_uri=pushed_requests.push(client.client_id, params, address),
                           expires_in=int(pushed_requests.TTL.total_seconds()))
        response.status_code = 201
    response.headers["Cache-Control"] = "no-store"
    return response


class UnknownResponseType(UnsupportedResponseTypeError):
    """unsupported_response_type, whatever the response type was (not echoed: see CodeGrant)."""

    def __init__(self, redirect_uri: str | None) -> None:
        super().__init__(None, description="The only response_type supported is code.",
                         redirect_uri=redirect_uri)

    def get_error_description(self) -> str:
        return str(self.description)  # authlib's would echo the response type


class Server(AuthorizationServer):
    # A pushed request is no FlaskOAuth2Request, which authlib's Flask types promise.
    def create_oauth2_request(self, request: Any) -> OAuth2Request:  # type: ignore[override]
        """The request given (a pushed one), or Flask's."""
        if isinstance(request, OAuth2Request):
            return request
        return super().create_oauth2_request(request)

    def get_authorization_grant(self, request: OAuth2Request) -> Any:
        """authlib's, once nothing unsupported is asked (app/oidc/unsupported.py); a response
        type it cannot echo (ValueError: see CodeGrant) is refused as any other it does not
        know, at the redirect URI if that is the client's."""
        unsupported.refuse(request)
        try:
            return super().get_authorization_grant(request)
        except ValueError:
            raise UnknownResponseType(unsupported.checked_redirect_uri(request)) from None

    def authenticate_client(self, request: OAuth2Request, methods: Collection[str],
                            endpoint: str = "token") -> ClientMixin:
        """authlib's, saying how the client is registered to authenticate when it fails
        (app/oidc/client_auth.py). Basic credentials that are not base64 of UTF-8 text (a
        ValueError in authlib) fail it too. A client that tried the Authorization header gets
        a 401 with WWW-Authenticate (RFC 6749 §5.2), as authlib answers."""
        try:
            client = super().authenticate_client(request, methods, endpoint)
        except ValueError:
            raise InvalidClientError(status_code=401, description="The Basic credentials are "
                                     "not base64 of UTF-8 text.") from None
        except InvalidClientError as error:
            raise InvalidClientError(status_code=error.status_code, description=(
                client_auth.description(request, methods, endpoint))) from None
        return client


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


def flask_response(answer: object) -> Response:
    """An answer of authlib's Flask server: a Flask response, though its types (those of
    authlib's core) say any object, or the core's tuple."""
    assert isinstance(answer, Response)
    return answer


def error_response(error: OAuth2Error, request: OAuth2Request | None = None) -> Response:
    """authlib's RFC 6749 answer to `error`. It reads the request only for error URIs, which
    are not configured here: None will do where no request was parsed."""
    answer = server().handle_error_response(request, error)  # type: ignore[arg-type]  # None
    return flask_response(answer)
