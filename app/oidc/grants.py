"""The grants authlib runs at the token endpoint, on the domain's codes, sessions and tokens
(domain/oidc/authorization.py, domain/sessions/sessions.py): authorization_code with PKCE (S256
only) and the ID token, refresh_token, and client_credentials."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    ClientMixin,
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
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core.grants import OpenIDCode

from app.domain.errors import AuthError
from app.domain.oidc import authorization
from app.domain.services import services
from app.domain.sessions import handoff, sessions
from app.domain.tokens import tokens
from app.models import HandoffCode
from app.oidc.clients import (
    SECRET_METHODS,
    TOKEN_AUTH_METHODS,
    Client,
    client_of,
    params_of,
)
from app.oidc.pushed import Pushed
from app.web import browser
from app.web.client import client_info

MAX_NONCE = 255  # what a code keeps of it (handoff_codes.nonce)
_VSCHARS = re.compile(r"^[\x20-\x7e]*$")  # RFC 6749 Appendix A: what a code may keep
# A grant's answer at the token endpoint: status, JSON body, headers.
TokenResponse = tuple[int, dict[str, Any], Collection[tuple[str, str]]]


class Code:
    """A stored authorization code as authlib's AuthorizationCodeMixin sees it."""

    def __init__(self, row: HandoffCode) -> None:
        self.row = row
        self.code_challenge = row.code_challenge
        self.code_challenge_method = "S256" if row.code_challenge else None

    def get_redirect_uri(self) -> str:
        return str(self.row.redirect_uri)

    def get_scope(self) -> str:
        return str(self.row.scope or "")

    def get_nonce(self) -> str | None:
        return self.row.nonce

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


# authlib echoes a request's response_type and redirect_uri in the description of the error that
# refuses them, and its errors refuse a description with characters RFC 6749 §4.1.2.1 leaves out
# of one (", \, control and non-ASCII characters): a ValueError, a 500, for every request naming
# such a value. The refusals below say the same without echoing what was sent.

class CodeGrant(AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = TOKEN_AUTH_METHODS
    presented: HandoffCode | None  # the code a token request named, while it is checked

    @staticmethod
    def validate_authorization_redirect_uri(request: OAuth2Request, client: ClientMixin) -> str:
        """authlib's check, for a client that has no default redirect URI: a registered one
        only. Its error goes back nowhere (the URI is not one of the client's)."""
        payload = params_of(request)
        untrusted_redirect_uri = payload.redirect_uri
        if not untrusted_redirect_uri:
            raise InvalidRequestError("Missing 'redirect_uri' in request.",
                                      state=payload.state)
        if not client.check_redirect_uri(untrusted_redirect_uri):
            raise InvalidRequestError("The redirect_uri is not registered for this client.")
        return str(untrusted_redirect_uri)

    def validate_authorization_request(self) -> str:
        """authlib's checks, then the nonce's, whatever the scope: a code keeps its nonce, and
        authlib checks one only when the request's own scope names openid (not when the scope
        is left out and the client's default is taken)."""
        redirect_uri: str = super().validate_authorization_request()
        nonce = params_of(self.request).data.get("nonce") or ""
        if len(nonce) > MAX_NONCE or not _VSCHARS.match(nonce):
            raise InvalidRequestError(f"nonce must be at most {MAX_NONCE} printable ASCII "
                                      "characters.", redirect_uri=redirect_uri)
        return redirect_uri

    def generate_authorization_code(self) -> str:
        return tokens.new_secret()

    def save_authorization_code(self, code: str, request: OAuth2Request) -> None:
        data = params_of(request).data
        assert request.user is not None  # the authorization endpoint's signed-in browser user
        signed_in: browser.BrowserUser = request.user
        authorization.save_code(code, signed_in.auth_session, authorization.Authorization(
            client_id=client_of(request).client_id, redirect_uri=params_of(request).redirect_uri,
            scope=request.scope, nonce=data.get("nonce"),
            code_challenge=data.get("code_challenge"),
            pushed_request=request.request_uri if isinstance(request, Pushed) else None))

    def query_authorization_code(self, code: str, client: ClientMixin) -> Code | None:
        row = authorization.find_code(code)
        if row is None:
            return None
        self.presented = row  # burned below if anything else about the request is wrong
        if not authorization.is_redeemable(row, client.get_client_id()):
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

    @hooked
    def create_token_response(self) -> TokenResponse:
        code = self.request.authorization_code
        assert isinstance(code, Code)  # query_authorization_code's, above
        try:
            issued = authorization.redeem(code.row.code_hash, client_of(self.request).client_id,
                                          client_info())
        except AuthError:
            raise InvalidGrantError("The code is invalid, expired or already used.") from None
        self.request.user = issued.user
        self.request.issued = issued  # type: ignore[attr-defined]  # for encode_id_token below
        return 200, token_response(issued), self.TOKEN_RESPONSE_HEADER

    def authenticate_user(self, authorization_code: Code) -> Any:
        return None  # create_token_response above redeems the code instead


def token_response(issued: sessions.IssuedTokens) -> dict[str, Any]:
    return {"access_token": issued.access_token, "token_type": "Bearer",
            "expires_in": issued.expires_in, "refresh_token": issued.refresh_token,
            "scope": issued.session.scope or ""}


class OpenIDConnect(OpenIDCode):
    """The ID token, as the domain makes it; authlib checks nonce and prompt at authorization."""

    def exists_nonce(self, nonce: str, request: OAuth2Request) -> bool:
        return False  # a nonce is the client's to check (in the ID token); codes are single use

    def encode_id_token(self, token: dict[str, Any], request: OAuth2Request) -> str:
        code = request.authorization_code
        assert isinstance(code, Code)
        issued = request.issued  # type: ignore[attr-defined]  # CodeGrant's, above
        return authorization.id_token(issued, code.get_nonce(), code.row.auth_time,
                                      code.row.browser_session_id)


class RefreshGrant(RefreshTokenGrant):
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
        asked = set(scope_to_list(params_of(self.request).scope) or ())
        found = authorization.find_token(token, "refresh_token") if asked else None
        if found is not None and not asked <= set((found.session.scope or "").split()):
            raise InvalidScopeError()

    @hooked
    def create_token_response(self) -> TokenResponse:
        refresh_token = self.request.refresh_token
        assert isinstance(refresh_token, str)  # _validate_request_token's, above
        try:
            issued = sessions.refresh(refresh_token, client_info(),
                                      client_id=client_of(self.request).client_id)
        except AuthError:
            raise InvalidGrantError("The refresh token is invalid, expired or revoked.") \
                from None
        self.request.user = issued.user
        return 200, token_response(issued), self.TOKEN_RESPONSE_HEADER


class ClientGrant(ClientCredentialsGrant):
    """client_credentials, for confidential clients: a token for the client itself, with the
    admin audience (domain/oidc/authorization.py, issue_client_token). A service client gets
    the admin scopes it asks for among those it was registered with (all of them when it names
    none); a site's own token has no scope, so the admin API takes nothing from it."""

    TOKEN_ENDPOINT_AUTH_METHODS = SECRET_METHODS

    def validate_requested_scope(self) -> None:
        asked = params_of(self.request).scope
        client = client_of(self.request)
        if client.service:
            granted = client.get_allowed_scope(asked)
            if granted is None:
                raise InvalidScopeError("The client was not registered for this scope.")
            self.request.granted_scope = granted  # type: ignore[attr-defined]  # read below
        elif asked:
            raise InvalidScopeError("A site's own token has no scope: the admin API's scopes "
                                    "are for service clients (`flask clients add`).")

    @hooked
    def create_token_response(self) -> TokenResponse:
        scope = getattr(self.request, "granted_scope", "")
        client = client_of(self.request)
        issued = authorization.issue_client_token(client.client_id, scope, client_info(),
                                                  client.registration)
        return 200, {"access_token": issued.token, "token_type": "Bearer",
                     "expires_in": services().access_tokens.ttl, "scope": scope}, \
            self.TOKEN_RESPONSE_HEADER
