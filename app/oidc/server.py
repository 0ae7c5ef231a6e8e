"""authlib's authorization server, on the service's records.

authlib parses the requests, authenticates clients (client_secret_basic, client_secret_post,
or none for a public client), checks redirect URIs, scopes, PKCE, nonce and prompt, shapes the
errors (RFC 6749 JSON at the token endpoint; a redirect only to a validated redirect URI) and
the endpoints of RFC 7009, RFC 7662 and RP-initiated logout. What it decides on is the domain's:
the client registry (domain/oidc/sites.py), the codes, sessions, tokens and claims
(domain/oidc/authorization.py, domain/sessions/sessions.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2.requests import FlaskOAuth2Request
from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    InvalidGrantError,
    InvalidRequestError,
    InvalidScopeError,
    OAuth2Error,
    scope_to_list,
)
from authlib.oauth2.rfc6749.grants import (
    AuthorizationCodeGrant,
    ClientCredentialsGrant,
    RefreshTokenGrant,
)
from authlib.oauth2.rfc6749.hooks import hooked
from authlib.oauth2.rfc6749.requests import OAuth2Payload
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oidc.core.grants import OpenIDCode
from authlib.oidc.rpinitiated import EndSessionEndpoint, EndSessionRequest
from flask import Flask, Response, current_app, jsonify
from flask import request as flask_request

from app.domain.errors import AuthError
from app.domain.oidc import authorization, pushed_requests, sites
from app.domain.oidc.sites import Site
from app.domain.sessions import handoff, sessions
from app.domain.tokens import tokens
from app.domain.tools import tools
from app.web import browser
from app.web.client import client_info

SERVER_KEY = "svc-oidc-server"
SECRET_METHODS = list(sites.SECRET_METHODS)
TOKEN_AUTH_METHODS = [*SECRET_METHODS, sites.PUBLIC]
MAX_NONCE = 255  # what a code keeps of it (handoff_codes.nonce)
_VSCHARS = re.compile(r"^[\x20-\x7e]*$")  # RFC 6749 Appendix A: what a code may keep


class Client:
    """A registered site as authlib's ClientMixin sees it."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.client_id = site.client_id
        self.client_metadata = {"post_logout_redirect_uris": list(site.post_logout_redirect_uris)}

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # every request names its redirect URI

    def get_allowed_scope(self, scope: str | None) -> str | None:
        """The scope asked for, if the client may have all of it; None (invalid_scope) if not.
        No scope at all asks for the client's default."""
        asked = scope_to_list(scope) if scope else list(self.site.allowed_scopes)
        if not asked or not set(asked) <= set(self.site.allowed_scopes):
            return None
        return " ".join(dict.fromkeys(asked))

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.site.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return self.site.check_secret(client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "introspection":  # confidential clients only
            return not self.site.is_public and method == self.site.auth_method
        return method == self.site.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        if grant_type == "client_credentials":
            return not self.site.is_public
        return grant_type in ("authorization_code", "refresh_token")


def query_client(client_id: str | None) -> Client | None:
    site = sites.registered_site(client_id)
    return Client(site) if site is not None else None


class Code:
    """A stored authorization code as authlib's AuthorizationCodeMixin sees it."""

    def __init__(self, row: Any) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = "S256" if row.code_challenge else None

    def get_redirect_uri(self) -> str:
        return str(self.row.redirect_uri)

    def get_scope(self) -> str:
        return str(self.row.scope or "")

    def get_nonce(self) -> str | None:
        return self.row.nonce  # type: ignore[no-any-return]

    def get_auth_time(self) -> int | None:
        return int(self.row.auth_time.timestamp()) if self.row.auth_time else None

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


class S256Only(CodeChallenge):
    """PKCE with S256 only (RFC 9700 §2.1.1), required of public clients at the authorization
    request already, so that a code is never issued to one without it."""

    DEFAULT_CODE_CHALLENGE_METHOD = "S256"
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if grant.request.client.site.is_public and not data.get("code_challenge"):
            raise InvalidRequestError("A public client must send a PKCE code_challenge (S256).")
        try:  # the handoff's rule: S256, 43 base64url characters
            handoff.checked_challenge(data.get("code_challenge"),
                                      data.get("code_challenge_method"))
        except AuthError as error:
            raise InvalidRequestError(error.detail) from None
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS

    def validate_authorization_request(self) -> str:
        """authlib's checks, then the nonce's, whatever the scope: a code keeps its nonce, and
        authlib checks one only when the request's own scope names openid (not when the scope
        is left out and the client's default is taken)."""
        redirect_uri: str = super().validate_authorization_request()
        nonce = self.request.payload.data.get("nonce") or ""
        if len(nonce) > MAX_NONCE or not _VSCHARS.match(nonce):
            raise InvalidRequestError(f"nonce must be at most {MAX_NONCE} printable ASCII "
                                      "characters.", redirect_uri=redirect_uri)
        return redirect_uri

    def generate_authorization_code(self) -> str:
        return tokens.new_secret()

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = request.payload.data
        signed_in: browser.BrowserUser = request.user
        authorization.save_code(code, signed_in.auth_session, authorization.Authorization(
            client_id=request.client.client_id, redirect_uri=request.payload.redirect_uri,
            scope=request.scope, nonce=data.get("nonce"),
            code_challenge=data.get("code_challenge"),
            pushed_request=request.request_uri if isinstance(request, Pushed) else None))

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        row = authorization.find_code(code)
        if row is None:
            return None
        self.presented = row  # burned below if anything else about the request is wrong
        if not authorization.is_redeemable(row, client.client_id):
            return None
        return Code(row)

    def validate_token_request(self) -> None:
        self.presented = None
        try:
            super().validate_token_request()
        except OAuth2Error:
            if self.presented is not None:
                authorization.refuse(self.presented.code_hash, client_info())
            raise

    @hooked  # type: ignore[misc]
    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        code: Code = self.request.authorization_code
        try:
            issued = authorization.redeem(code.row.code_hash, self.request.client.client_id,
                                          client_info())
        except AuthError:
            raise InvalidGrantError("The code is invalid, expired or already used.") from None
        self.request.user = issued.user
        self.request.issued = issued
        return 200, token_response(issued), self.TOKEN_RESPONSE_HEADER

    def authenticate_user(self, authorization_code: Code) -> Any:
        return None  # create_token_response above redeems the code instead


def token_response(issued: sessions.IssuedTokens) -> dict[str, Any]:
    return {"access_token": issued.access_token, "token_type": "Bearer",
            "expires_in": issued.expires_in, "refresh_token": issued.refresh_token,
            "scope": issued.session.scope or ""}


class OpenIDConnect(OpenIDCode):  # type: ignore[misc]
    """The ID token, as the domain makes it; authlib checks nonce and prompt at authorization."""

    def exists_nonce(self, nonce: str, request: OAuth2Request) -> bool:
        return False  # a nonce is the client's to check (in the ID token); codes are single use

    def encode_id_token(self, token: dict[str, Any], request: OAuth2Request) -> str:
        code: Code = request.authorization_code
        return authorization.id_token(request.issued, code.get_nonce(), code.row.auth_time,
                                      code.row.browser_session_id)


class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    """Refresh with the service's own rotation, grace window and reuse detection
    (sessions.refresh), for the client the token was issued to."""

    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS

    def _validate_request_token(self, client: Client) -> str:
        refresh_token = self.request.form.get("refresh_token")
        if refresh_token is None:
            raise InvalidRequestError("Missing 'refresh_token' in request.")
        return str(refresh_token)

    def _validate_token_scope(self, token: str) -> None:
        """A refresh may name the scope again, or part of it (RFC 6749 §6); it keeps the scope
        its session was granted, which the response says."""
        asked = set(scope_to_list(self.request.payload.scope) or ())
        found = authorization.find_token(token, authorization.TokenKind.REFRESH) if asked else None
        if found is not None and not asked <= set((found.session.scope or "").split()):
            raise InvalidScopeError()

    @hooked  # type: ignore[misc]
    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        try:
            issued = sessions.refresh(self.request.refresh_token, client_info(),
                                      client_id=self.request.client.client_id)
        except AuthError:
            raise InvalidGrantError("The refresh token is invalid, expired or revoked.") \
                from None
        self.request.user = issued.user
        return 200, token_response(issued), self.TOKEN_RESPONSE_HEADER


class ClientGrant(ClientCredentialsGrant):  # type: ignore[misc]
    """client_credentials, for confidential clients: a token for the client itself, with the
    admin audience (domain/oidc/authorization.py, issue_client_token). No scopes are defined for it
    yet, so none may be asked for."""

    TOKEN_ENDPOINT_AUTH_METHODS = SECRET_METHODS

    def validate_requested_scope(self) -> None:
        if self.request.payload.scope:
            raise InvalidScopeError("No scope is defined for a client's own token yet.")

    @hooked  # type: ignore[misc]
    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        issued = authorization.issue_client_token(self.request.client.client_id, client_info())
        return 200, {"access_token": issued.token, "token_type": "Bearer",
                     "expires_in": tools().access_tokens.ttl, "scope": ""}, \
            self.TOKEN_RESPONSE_HEADER


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = TOKEN_AUTH_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        found = authorization.find_token(token_string, token_type_hint)
        return _Token(found) if found is not None else None

    def revoke_token(self, token: _Token, request: OAuth2Request) -> None:
        authorization.revoke(token.found.session.id, client_info())

    def authenticate_token(self, request: OAuth2Request, client: Client) -> Any:
        # RFC 7009 §2.2: a token that is not the client's is answered like an unknown one.
        try:
            return super().authenticate_token(request, client)
        except InvalidGrantError:
            return None


class Introspection(IntrospectionEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = SECRET_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        found = authorization.find_token(token_string, token_type_hint)
        return _Token(found) if found is not None else None

    def check_permission(self, token: _Token, client: Client, request: OAuth2Request) -> bool:
        # Access tokens have the shared audience: any confidential client may ask about one.
        # A refresh token is its own client's business only.
        return token.found.kind is authorization.TokenKind.ACCESS or token.check_client(client)

    def introspect_token(self, token: _Token) -> dict[str, Any]:
        return authorization.introspection(token.found)


class _Token:
    def __init__(self, found: authorization.TokenOf) -> None:
        self.found = found

    def check_client(self, client: Client) -> bool:
        return self.found.session.client_id == client.client_id

    def is_expired(self) -> bool:
        return False  # `active` below says it all

    def is_revoked(self) -> bool:
        return not self.found.active


class EndSession(EndSessionEndpoint):  # type: ignore[misc]
    """RP-initiated logout. An id_token_hint must be one of ours (signed with a key of our JWKS,
    our issuer); with one, the browser session it names ends, with every client session opened
    through it; and the browser is signed out."""

    def get_server_jwks(self) -> dict[str, Any]:
        return tools().access_tokens.keyring.jwks()  # type: ignore[no-any-return]

    def validate_request(self, request: OAuth2Request) -> EndSessionRequest:
        validated = super().validate_request(request)
        claims = validated.id_token_claims
        if claims is None:
            return validated
        if claims.get("iss") != current_app.config["PUBLIC_URL"]:
            raise InvalidRequestError("The id_token_hint was not issued here.")
        # Our access tokens are signed with the same keys: only an ID token (its audience is
        # a registered client) may name a session to end.
        audience = claims.get("aud")
        if not isinstance(audience, str) or query_client(audience) is None:
            raise InvalidRequestError("The id_token_hint is not an ID token of a client.")
        return validated

    def end_session(self, end_session_request: EndSessionRequest) -> None:
        """The hint only says which sign-in to end; the browser must be that person's. A
        stranger holding someone's (even expired) ID token ends nothing with it."""
        claims = end_session_request.id_token_claims or {}
        sid, sub = claims.get("sid"), claims.get("sub")
        signed_in = browser.current()
        if signed_in is None or (claims and signed_in.user.id != sub):
            return
        if isinstance(sid, str) and isinstance(sub, str):
            authorization.end_single_sign_on(sid, sub, client_info())
        if signed_in.auth_session.id == sid:
            browser.forget()  # its session just ended above
        else:
            browser.sign_out()


# Pushed authorization requests (RFC 9126) ---------------------------------------------------

class _Params(OAuth2Payload):
    """Parameters as authlib reads them, from a mapping of one value each."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self._params = dict(params)

    @property
    def data(self) -> dict[str, str]:
        return self._params

    @property
    def datalist(self) -> dict[str, list[str]]:
        return {name: [value] for name, value in self._params.items()}


class Pushed(OAuth2Request):  # type: ignore[misc]
    """An authorization request whose parameters a client pushed (or is pushing): authlib
    validates them as it would a query."""

    def __init__(self, params: Mapping[str, str], request_uri: str | None) -> None:
        super().__init__(flask_request.method, flask_request.url, headers=flask_request.headers)
        self.payload = _Params(params)
        self.request_uri = request_uri


def authorization_request() -> OAuth2Request:
    """The authorization request at the authorization endpoint: the browser's query, or, when
    it names a request_uri, the parameters its client pushed, and those alone (RFC 9126 §4).
    InvalidRequestUri when the request_uri is not a live one of the client_id beside it."""
    untrusted_request_uri = flask_request.args.get("request_uri")
    if untrusted_request_uri is None:
        return FlaskOAuth2Request(flask_request)
    params = pushed_requests.params_of(untrusted_request_uri, flask_request.args.get("client_id"))
    return Pushed(params, untrusted_request_uri)


def _pushed_params(client: Client) -> dict[str, str]:
    """The authorization request in a push's form body, for the client that sent it."""
    form = flask_request.form
    if any(len(form.getlist(name)) > 1 for name in form):
        raise InvalidRequestError("A parameter is given more than once.")
    if "request_uri" in form or "request" in form:
        raise InvalidRequestError("A pushed request carries its parameters, not request or "
                                  "request_uri.")
    if form.get("client_id", client.client_id) != client.client_id:
        raise InvalidRequestError("client_id is not the authenticated client.")
    params = {name: value for name, value in form.items() if name != "client_secret"}
    params["client_id"] = client.client_id
    if len(json.dumps(params)) > pushed_requests.MAX_PARAMS:
        raise InvalidRequestError("The authorization request is too long.")
    return params


def push_authorization_request(validate_params: Any) -> Response:
    """RFC 9126 §2: authenticate the client, validate its authorization request as the
    authorization endpoint would (and `validate_params` what authlib leaves to us), keep it,
    and answer its request_uri. Errors are RFC 6749 JSON, never a redirect."""
    server_ = server()
    sent = FlaskOAuth2Request(flask_request)
    try:
        client = server_.authenticate_client(sent, TOKEN_AUTH_METHODS, "pushed_authorization")
        params = _pushed_params(client)
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
