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
from joserfc import jws
from joserfc.errors import JoseError

from app.domain.oidc import authorization
from app.domain.services import services
from app.infra.settings import settings
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
            return RevocationEndpoint.authenticate_token(self, request, client)
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
    """RP-initiated logout. An id_token_hint must be an ID token of ours (signed with a key of
    our JWKS, our issuer, a client's audience, typed as our ID tokens are: a logout token or an
    access token is none). Only one of this browser's current session goes on without asking
    (`goes_unasked`): the browser session ends, with every client session opened through it.
    Any other hint (an ended session's, another person's) and no hint get the question first
    (the view's page, whose button posts to the pages' CSRF-checked /logout)."""

    def get_server_jwks(self) -> dict[str, Any]:
        return services().access_tokens.keyring.jwks()

    def validate_request(self, request: OAuth2Request) -> EndSessionRequest:
        validated = super().validate_request(request)
        claims = validated.id_token_claims
        if claims is None:
            return validated
        if claims.get("iss") != settings().public_url:
            raise InvalidRequestError("The id_token_hint was not issued here.")
        # Our access tokens are signed with the same keys: only an ID token (its audience is
        # a registered client) may name a session to end.
        audience = claims.get("aud")
        if not isinstance(audience, str) or query_client(audience) is None:
            raise InvalidRequestError("The id_token_hint is not an ID token of a client.")
        # A back-channel logout token has a client's audience too (and `sid`, `sub`): the
        # header's type and the `events` claim tell it from an ID token.
        hint = str(request.payload.data.get("id_token_hint")) if request.payload else ""
        if _header_type(hint) != ID_TOKEN_TYPE or "events" in claims:
            raise InvalidRequestError("The id_token_hint is not an ID token.")
        return validated

    def end_session(self, end_session_request: EndSessionRequest) -> None:
        """Called only when `goes_unasked`: a browser signed out already ends nothing; one
        signed in ends the session the hint names, which is its own."""
        claims = end_session_request.id_token_claims or {}
        signed_in = browser.current()
        if signed_in is None or not _of_current_session(claims, signed_in):
            return
        authorization.end_single_sign_on(signed_in.auth_session.id, signed_in.user.id,
                                         client_info())
        browser.forget()  # its session just ended above


ID_TOKEN_TYPE = "JWT"  # noqa: S105 (the `typ` of our ID tokens: app/domain/oidc/authorization.py)


def goes_unasked(validated: EndSessionRequest) -> bool:
    """Whether an RP-initiated logout may end without asking: the browser is signed out
    already, or the hint is an ID token of its current session (our `sid` of it, its person).
    The ID token of an ended session, or another person's, is no proof that this sign-out is
    wanted now (OpenID Connect RP-Initiated Logout 1.0, §2 and §6)."""
    signed_in = browser.current()
    if signed_in is None:
        return True
    return validated.id_token_claims is not None and _of_current_session(
        validated.id_token_claims, signed_in)


def _of_current_session(claims: dict[str, Any], signed_in: browser.BrowserUser) -> bool:
    return (claims.get("sid") == signed_in.auth_session.id
            and claims.get("sub") == signed_in.user.id)


def _header_type(token: str) -> str | None:
    """The `typ` of a compact JWS whose signature has been checked."""
    try:
        found = jws.extract_compact(token.encode()).headers().get("typ")
    except JoseError:
        return None
    return found if isinstance(found, str) else None
