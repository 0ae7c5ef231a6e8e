"""The endpoints authlib answers besides the token endpoint: revocation (RFC 7009),
introspection (RFC 7662) and RP-initiated logout, on the domain's sessions."""

from __future__ import annotations

from typing import Any

from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import (
    InvalidGrantError,
    InvalidRequestError,
)
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oidc.rpinitiated import EndSessionEndpoint, EndSessionRequest
from flask import current_app

from app.domain.oidc import authorization
from app.domain.tools import tools
from app.oidc.clients import (
    SECRET_METHODS,
    TOKEN_AUTH_METHODS,
    Client,
    query_client,
)
from app.web import browser
from app.web.client import client_info


class Revocation(RevocationEndpoint):
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


class Introspection(IntrospectionEndpoint):
    CLIENT_AUTH_METHODS = SECRET_METHODS

    def query_token(self, token_string: str, token_type_hint: str | None) -> Any:
        found = authorization.find_token(token_string, token_type_hint)
        return _Token(found) if found is not None else None

    def check_permission(self, token: _Token, client: Client, request: OAuth2Request) -> bool:
        # Access tokens have the shared audience: any confidential client may ask about one.
        # A refresh token is its own client's business only.
        return token.found.kind == "access_token" or token.check_client(client)

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


class EndSession(EndSessionEndpoint):
    """RP-initiated logout. An id_token_hint must be one of ours (signed with a key of our JWKS,
    our issuer); with one, the browser session it names ends, with every client session opened
    through it; and the browser is signed out."""

    def get_server_jwks(self) -> dict[str, Any]:
        return tools().access_tokens.keyring.jwks()

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
