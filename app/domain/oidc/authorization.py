"""The service as an OpenID Connect provider: codes for a client, the sessions they open, ID
tokens, userinfo, revocation, introspection and the end of a single sign-on. The protocol is
authlib's (app/oidc); the rules are here, on the service's own records.
Why: docs/architecture/design-notes.md, "OpenID Connect authorization and pushed requests"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from authlib.oidc.core.util import create_half_hash
from sqlalchemy import select

from app.db.rows import claim_once
from app.db.transactions import kept, writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.oidc import claims as by_scope
from app.domain.oidc import pushed_requests
from app.domain.services import services
from app.domain.sessions import handoff, sessions
from app.domain.sessions.errors import InvalidCode
from app.domain.tokens import tokens
from app.domain.tokens.errors import InsufficientScope, InvalidToken
from app.extensions import db
from app.infra.live_sql import is_live
from app.infra.settings import settings
from app.models import AuthSession, ConsentGrant, HandoffCode, RefreshToken, User


@dataclass(frozen=True)
class Authorization:
    """An authorization request authlib validated: what its code is bound to."""

    client_id: str
    redirect_uri: str
    scope: str
    nonce: str | None
    code_challenge: str | None
    pushed_request: str | None = None  # its request_uri, spent with the code (RFC 9126)


def auth_time(browser_session: AuthSession) -> int:
    """When the person last proved who they are in this browser: its session's start."""
    return int(browser_session.created_at.timestamp())


@writes
def save_code(raw: str, browser_session: AuthSession, authorization: Authorization) -> None:
    """Store a code for the client (only its hash). EmailNotConfirmed when the account may not
    sign in; InvalidRequestUri when the pushed request it came from was already spent."""
    sessions.require_confirmed(browser_session.user)
    if authorization.pushed_request is not None:
        pushed_requests.spend(authorization.pushed_request)
    at = now()
    db.session.add(HandoffCode(
        code_hash=tokens.hash_secret(raw), user_id=browser_session.user_id,
        provider=browser_session.provider, redirect_uri=authorization.redirect_uri,
        code_challenge=authorization.code_challenge, created_at=at,
        expires_at=at + handoff.CODE_TTL, client_id=authorization.client_id,
        scope=authorization.scope, nonce=authorization.nonce,
        auth_time=browser_session.created_at, browser_session_id=browser_session.id,
        second_factor=browser_session.second_factor))


def find_code(raw: str) -> HandoffCode | None:
    """A client's code by its value, whatever its state (read only)."""
    code = db.session.get(HandoffCode, tokens.hash_secret(raw))
    return code if code is not None and code.client_id is not None else None


def is_redeemable(code: HandoffCode, client_id: str) -> bool:
    return code.client_id == client_id and code.redeemed_at is None and code.expires_at > now()


@writes
def refuse(code_hash: str, client: ClientInfo) -> None:
    """A code presented with what is not its own (client, redirect URI, verifier), too late, or
    again: it is burned, and if it was redeemed before, the session that opened is revoked."""
    if claim_once(HandoffCode, HandoffCode.code_hash == code_hash, HandoffCode.redeemed_at,
                  redeemed_at=now()):
        code = db.session.get(HandoffCode, code_hash, populate_existing=True)
        audit.record(AuditName.HANDOFF_CODE_REFUSED, client, user_id=code.user_id if code else None)
        return
    code = db.session.get(HandoffCode, code_hash, populate_existing=True)
    if code is not None:
        handoff.revoke_first_redemption(code, client)


@writes
def redeem(code_hash: str, client_id: str, client: ClientInfo) -> sessions.IssuedTokens:
    """Trade a code the client proved its own for a session of the client and its first tokens;
    InvalidCode (the code burned, and a replay's first session revoked) otherwise."""
    at = now()
    claimed = claim_once(HandoffCode, HandoffCode.code_hash == code_hash,
                         HandoffCode.redeemed_at, redeemed_at=at)
    code = db.session.get(HandoffCode, code_hash, populate_existing=True)
    if code is None or code.client_id != client_id:
        raise kept(InvalidCode())
    if not claimed:
        handoff.revoke_first_redemption(code, client)
        raise kept(InvalidCode())
    user = db.session.get(User, code.user_id)
    if code.expires_at <= at or user is None or user.disabled_at is not None:
        audit.record(AuditName.HANDOFF_CODE_REFUSED, client, user_id=code.user_id)
        raise kept(InvalidCode())
    issued = sessions.issue_tokens(user, code.provider, client, sessions.ForClient(
        client_id, code.scope or "", code.browser_session_id), second_factor=code.second_factor)
    code.session_id = issued.session.id
    return issued


# Consent (third-party sites) ---------------------------------------------------------------------

def has_consent(user_id: str, client_id: str, scope: str) -> bool:
    """Whether the person already allowed this client all of `scope`."""
    grant = db.session.get(ConsentGrant, (user_id, client_id))
    return grant is not None and set(scope.split()) <= set(grant.scope.split())


@writes
def give_consent(user_id: str, client_id: str, scope: str, client: ClientInfo) -> None:
    """Remember that the person allowed this client `scope` (with what it had before)."""
    grant = db.session.get(ConsentGrant, (user_id, client_id))
    if grant is None:
        grant = ConsentGrant(user_id=user_id, client_id=client_id, scope="")
        db.session.add(grant)
    grant.scope = " ".join(dict.fromkeys([*grant.scope.split(), *scope.split()]))
    grant.granted_at = now()
    audit.record(AuditName.CONSENT_GIVEN, client, user_id=user_id)


# What a client learns about the person ---------------------------------------------------------

# Every claim an ID token (id_token below) or the userinfo answer may carry: the discovery
# document's claims_supported.
CLAIMS = ("iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "sid", "amr", "acr",
          "email", "email_verified", "name")


def user_claims(user: User, scope: str) -> dict[str, Any]:
    """The person's claims that `scope` allows (oidc/claims.py)."""
    return by_scope.allowed({"sub": user.id, "email": user.email,
                             "email_verified": bool(user.email_verified),
                             "name": user.full_name}, scope)


def id_token(issued: sessions.IssuedTokens, nonce: str | None, auth_time_at: datetime | None,
             browser_session_id: str | None) -> str:
    """The ID token of a code's first tokens, signed with the access tokens' keyring (its JWKS
    is the one published)."""
    session = issued.session
    signer = services().access_tokens
    iat = int(now().timestamp())
    claims: dict[str, Any] = {
        **user_claims(issued.user, session.scope or ""),
        "iss": settings().public_url, "aud": session.client_id, "iat": iat,
        "exp": iat + settings().access_token_ttl,
        "auth_time": int((auth_time_at or session.created_at).timestamp()),
        "sid": browser_session_id or session.id,
        "amr": sessions.amr(session.provider, session.second_factor),
        "acr": sessions.assurance(session.second_factor),
    }
    if nonce:
        claims["nonce"] = nonce
    at_hash = create_half_hash(issued.access_token, signer.keyring.signing_key().alg)
    if at_hash is not None:
        claims["at_hash"] = at_hash.decode()
    return signer.sign(claims, "JWT")


def userinfo(access_token: str) -> dict[str, Any]:
    """The claims of the person behind an access token issued to a client with `openid`;
    a BearerError for any other token."""
    bearer = sessions.authenticate_bearer(access_token, clients_own=True)
    session = db.session.get(AuthSession, bearer.session_id)
    if session is None or "openid" not in (session.scope or "").split():
        raise InsufficientScope()
    return user_claims(session.user, session.scope or "")


# Client credentials ----------------------------------------------------------------------------

CLIENT_TOKEN_TYPE = "at+jwt"  # noqa: S105 (a media type)


@writes
def issue_client_token(client_id: str, scope: str, client: ClientInfo,
                       registration: str = "") -> tokens.AccessToken:
    """An access token for a confidential client itself (client_credentials), for the admin
    API. Its audience is SVC_ADMIN_AUDIENCE, never the client sites' shared one, so no site
    can take it for a person's token (its `sub` is the client id), and /verify refuses it."""
    signer = services().access_tokens
    iat = int(now().timestamp())
    claims = {"iss": signer.issuer, "aud": settings().admin_audience,
              "sub": client_id, "client_id": client_id, "scope": scope,
              "jti": tokens.new_secret(), "iat": iat, "nbf": iat, "exp": iat + signer.ttl}
    if registration:  # a service client's: the admin API asks that it is still the same one
        claims[tokens.REGISTRATION_CLAIM] = registration
    audit.record(AuditName.CLIENT_TOKEN_ISSUED, replace(client, actor=f"client:{client_id}"))
    return tokens.AccessToken(signer.sign(claims, CLIENT_TOKEN_TYPE), iat + signer.ttl)


# Revocation and introspection ----------------------------------------------------------------

class TokenKind(StrEnum):
    """The two tokens a client may revoke or introspect, by RFC 7009's token_type_hint names."""

    ACCESS = "access_token"
    REFRESH = "refresh_token"


@dataclass(frozen=True)
class TokenOf:
    """What an access or refresh token presented to revocation or introspection stands for."""

    kind: TokenKind
    session: AuthSession
    expires_at: int
    issued_at: int
    active: bool


def find_token(untrusted_token: str, hint: str | None) -> TokenOf | None:
    """The session behind an access token (checked as /verify checks it, the session's life
    aside) or a refresh token; None for anything else. `hint` (RFC 7009's token_type_hint)
    only says which to try first."""
    kinds = [TokenKind.REFRESH, TokenKind.ACCESS]
    if hint == TokenKind.ACCESS:
        kinds.reverse()
    for kind in kinds:
        found = _refresh_token(untrusted_token) if kind is TokenKind.REFRESH \
            else _access_token(untrusted_token)
        if found is not None:
            return found
    return None


def _refresh_token(raw: str) -> TokenOf | None:
    row = db.session.scalars(select(RefreshToken).where(
        RefreshToken.token_hash == tokens.hash_secret(raw))).one_or_none()
    if row is None:
        return None
    at = now()
    active = row.rotated_at is None and row.expires_at > at and is_live(row.session, at)
    return TokenOf(TokenKind.REFRESH, row.session, int(row.expires_at.timestamp()),
                   int(row.created_at.timestamp()), active)


def _access_token(token: str) -> TokenOf | None:
    try:
        claims = services().access_tokens.verify(token, now(), clients_own=True)
    except InvalidToken:  # TokenExpired is one
        return None
    session = db.session.get(AuthSession, claims.session_id)
    if session is None:
        return None
    return TokenOf(TokenKind.ACCESS, session, claims.expires_at, claims.issued_at,
                   is_live(session, now()))


def introspection(found: TokenOf) -> dict[str, Any]:
    """RFC 7662's answer for an active token."""
    session = found.session
    body: dict[str, Any] = {
        "active": True,
        "token_type": "Bearer" if found.kind is TokenKind.ACCESS else "refresh_token",
        "sub": session.user_id, "sid": session.id, "exp": found.expires_at,
        "iat": found.issued_at, "iss": settings().public_url,
        "aud": sessions.audience_of(session),
    }
    if session.client_id is not None:
        body |= {"client_id": session.client_id, "scope": session.scope or ""}
    return body


@writes
def revoke(session_id: str, client: ClientInfo) -> None:
    """A client revoked one of its tokens: the session behind it ends, with both its tokens."""
    session = db.session.get(AuthSession, session_id)
    if session is not None:
        sessions.revoke(session, "token_revoked", confirm=True)
        audit.record(AuditName.TOKEN_REVOKED, client, user_id=session.user_id,
                     session_id=session.id)


# The end of a single sign-on -------------------------------------------------------------------

@writes
def end_single_sign_on(browser_session_id: str, user_id: str, client: ClientInfo) -> None:
    """RP-initiated logout: the browser session and every OpenID Connect client's session opened
    through it (a family site's sessions end by its own sign-out)."""
    opened = list(db.session.scalars(select(AuthSession.id).where(
        AuthSession.browser_session_id == browser_session_id, AuthSession.client_id.is_not(None),
        AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))))
    for session_id in [browser_session_id, *opened]:
        sessions.revoke_all(user_id, "logout", only_session=session_id, confirm=True)
    audit.record(AuditName.LOGOUT_LOCAL, client, user_id=user_id, session_id=browser_session_id)
