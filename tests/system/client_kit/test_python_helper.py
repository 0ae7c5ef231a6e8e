"""svc_auth_client: TokenVerifier against key sets it fetches (injected, or over real HTTP from
a local server in a thread), and the Flask guards."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from flask import Flask
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm
from svc_auth_client import (
    InvalidToken,
    KeysUnavailable,
    MissingToken,
    TokenExpired,
    TokenVerifier,
    current_claims,
    init_app,
    require_plan,
    require_token,
)

from tests.support.encoding import b64url
from tests.support.http import bearer, serving_thread

ISSUER = "https://accounts.example"
AUDIENCE = "svc"
JWKS_URL = f"{ISSUER}/.well-known/jwks.json"


# -- keys, tokens, key sets -----------------------------------------------------------------------


class Key:
    """A signing key as the service has it: private part, kid, alg, and its public JWK."""

    def __init__(self, alg: str = "ES256") -> None:
        self.alg = alg
        self.kid = uuid.uuid4().hex[:16]
        self.private: Any = {"ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
                             "RS256": lambda: rsa.generate_private_key(65537, 2048),
                             "EdDSA": ed25519.Ed25519PrivateKey.generate}[alg]()
        to_jwk: Any = {"ES256": ECAlgorithm, "RS256": RSAAlgorithm, "EdDSA": OKPAlgorithm}[alg]
        self.jwk = {**to_jwk.to_jwk(self.private.public_key(), as_dict=True), "kid": self.kid,
                    "alg": alg, "use": "sig"}

    def public_pem(self) -> bytes:
        return bytes(self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def sign_es256(self, data: bytes) -> bytes:
        """A JWS ES256 signature: r and s, 32 bytes each (not DER)."""
        r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")

    def token(self, header: dict[str, Any] | None = None, **claims: Any) -> str:
        return jwt.encode(make_claims(**claims), self.private, algorithm=self.alg,
                          headers={"kid": self.kid, "typ": "at+jwt", **(header or {})})


def make_claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": str(uuid.uuid4()), "sid": str(uuid.uuid4()),
              "plan": "free", "jti": uuid.uuid4().hex, "iat": now, "nbf": now, "exp": now + 3600}
    claims.update(overrides)
    return {name: value for name, value in claims.items() if value is not None}


def hand_made(header: dict[str, Any], claims: dict[str, Any], sign: Callable[[bytes], bytes]
              ) -> str:
    """A JWT put together by hand, for what PyJWT refuses to sign."""
    signing_input = (b64url(json.dumps(header).encode()) + "." +
                     b64url(json.dumps(claims).encode())).encode()
    return signing_input.decode() + "." + b64url(sign(signing_input))


class KeySet:
    """An injected JWKS fetcher: serves `keys`, counts fetches, can be made to fail."""

    def __init__(self, *keys: Key) -> None:
        self.keys = list(keys)
        self.extra: list[dict[str, Any]] = []
        self.fetches = 0
        self.failing = False

    def __call__(self, url: str, timeout: float) -> Any:
        assert url == JWKS_URL and 0 < timeout <= 10
        self.fetches += 1
        if self.failing:
            raise ValueError("not JSON")  # what requests raises for a body that is not JSON
        return {"keys": [key.jwk for key in self.keys] + self.extra}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


def verifier_for(keys: KeySet, clock: Clock, **options: Any) -> TokenVerifier:
    return TokenVerifier(JWKS_URL, ISSUER, AUDIENCE, fetch=keys, clock=clock, **options)


# -- verifying ------------------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["ES256", "RS256", "EdDSA"])
def test_a_good_token_gives_its_claims(clock: Clock, alg: str):
    key = Key(alg)
    verifier = verifier_for(KeySet(key), clock)
    claims = verifier.verify(key.token(plan="pro", sub="user-1"))
    assert claims["sub"] == "user-1" and claims["plan"] == "pro"
    assert set(claims) == {"iss", "aud", "sub", "sid", "plan", "jti", "iat", "nbf", "exp"}


def test_the_key_set_is_fetched_once_and_cached(clock: Clock):
    key = Key()
    keys = KeySet(key)
    verifier = verifier_for(keys, clock, cache_ttl=300)
    for _ in range(5):
        verifier.verify(key.token())
    assert keys.fetches == 1
    clock.advance(301)  # stale: fetched again on the next use
    verifier.verify(key.token())
    assert keys.fetches == 2


def test_key_rotation_a_new_kid_is_fetched_and_the_old_one_still_works(clock: Clock):
    old, new = Key(), Key()
    keys = KeySet(old)
    verifier = verifier_for(keys, clock, refetch_interval=30)
    verifier.verify(old.token())
    assert keys.fetches == 1

    clock.advance(60)
    keys.keys = [new, old]  # the service rotated: new key first, old one kept while it verifies
    assert verifier.verify(new.token(plan="team"))["plan"] == "team"
    assert keys.fetches == 2
    verifier.verify(old.token())  # still listed: accepted, no fetch
    assert keys.fetches == 2

    clock.advance(301)
    keys.keys = [new]  # the old key has left the set: its tokens stop working
    with pytest.raises(InvalidToken):
        verifier.verify(old.token())
    verifier.verify(new.token())


def test_an_unknown_kid_after_a_refetch_is_invalid_and_refetches_are_throttled(clock: Clock):
    known, stranger = Key(), Key()
    keys = KeySet(known)
    verifier = verifier_for(keys, clock, refetch_interval=30)
    verifier.verify(known.token())
    clock.advance(31)

    with pytest.raises(InvalidToken, match="unknown key"):
        verifier.verify(stranger.token())
    assert keys.fetches == 2  # one refetch for the unknown kid
    for _ in range(20):  # a flood of made-up kids: no further fetches within the interval
        with pytest.raises(InvalidToken):
            verifier.verify(stranger.token(header={"kid": uuid.uuid4().hex}))
    assert keys.fetches == 2

    clock.advance(29)
    with pytest.raises(InvalidToken):
        verifier.verify(stranger.token())
    assert keys.fetches == 2
    clock.advance(2)
    keys.keys.append(stranger)  # it was real after all, and now it is published
    verifier.verify(stranger.token())
    assert keys.fetches == 3


def test_a_kid_unknown_right_after_the_first_fetch_is_not_fetched_again(clock: Clock):
    keys = KeySet(Key())
    verifier = verifier_for(keys, clock)
    with pytest.raises(InvalidToken):
        verifier.verify(Key().token())
    assert keys.fetches == 1


def test_expired_and_not_yet_valid_tokens(clock: Clock):
    key = Key()
    verifier = verifier_for(KeySet(key), clock, leeway=5)
    now = int(time.time())
    with pytest.raises(TokenExpired) as expired:
        verifier.verify(key.token(iat=now - 3700, nbf=now - 3700, exp=now - 100))
    assert expired.value.code == "token_expired"
    # Within the 5 s of leeway: still good.
    verifier.verify(key.token(iat=now - 3600, nbf=now - 3600, exp=now - 2))
    with pytest.raises(InvalidToken):
        verifier.verify(key.token(nbf=now + 120))
    with pytest.raises(InvalidToken):
        verifier.verify(key.token(iat=now + 120))


@pytest.mark.parametrize("claims", [
    {"aud": "another-audience"},
    {"aud": ["another-audience"]},
    {"iss": "https://evil.example"},
    {"iss": ISSUER + "/"},
    {"sid": None},
    {"plan": None},
    {"jti": None},
    {"exp": None},
    {"nbf": None},
    {"plan": 7},
    {"sub": 42},
], ids=lambda claims: ",".join(f"{k}={v}" for k, v in claims.items()))
def test_wrong_audience_issuer_or_claims_are_invalid(clock: Clock, claims: dict[str, Any]):
    key = Key()
    verifier = verifier_for(KeySet(key), clock)
    with pytest.raises(InvalidToken) as refused:
        verifier.verify(key.token(**claims))
    assert refused.value.code == "invalid_token"


@pytest.mark.parametrize("header", [
    {"kid": "KID", "typ": "JWT"},
    {"kid": "KID", "typ": None},  # None: left out
    {"typ": "at+jwt"},
    {"kid": 7, "typ": "at+jwt"},
], ids=["typ=JWT", "no typ", "no kid", "kid=7"])
def test_a_header_that_is_not_an_access_tokens_is_invalid(clock: Clock, header: dict[str, Any]):
    key = Key()
    verifier = verifier_for(KeySet(key), clock)
    headers = {name: key.kid if value == "KID" else value for name, value in header.items()}
    token = hand_made({"alg": "ES256", **{k: v for k, v in headers.items() if v is not None}},
                      make_claims(), key.sign_es256)
    with pytest.raises(InvalidToken):
        verifier.verify(token)
    # The same claims and key under the right header are fine, so the header is what failed.
    verifier.verify(hand_made({"alg": "ES256", "kid": key.kid, "typ": "at+jwt"}, make_claims(),
                              key.sign_es256))
    verifier.verify(jwt.encode(make_claims(), key.private, algorithm="ES256",
                               headers={"kid": key.kid, "typ": "at+jwt"}))
    verifier.verify(jwt.encode(make_claims(), key.private, algorithm="ES256",
                               headers={"kid": key.kid, "typ": "application/at+jwt"}))


def test_alg_none_is_invalid(clock: Clock):
    key = Key()
    verifier = verifier_for(KeySet(key), clock)
    for alg in ("none", "None", "NONE"):
        token = hand_made({"alg": alg, "kid": key.kid, "typ": "at+jwt"}, make_claims(),
                          lambda data: b"")
        with pytest.raises(InvalidToken):
            verifier.verify(token)


def test_hs256_signed_with_the_public_key_is_invalid(clock: Clock):
    """The classic confusion: an HMAC over the token keyed with the (public) PEM of the key."""
    key = Key()
    verifier = verifier_for(KeySet(key), clock)
    for secret in (key.public_pem(), json.dumps(key.jwk).encode()):
        token = hand_made({"alg": "HS256", "kid": key.kid, "typ": "at+jwt"},
                          make_claims(plan="team"),
                          lambda data, s=secret: hmac.new(s, data, hashlib.sha256).digest())
        with pytest.raises(InvalidToken):
            verifier.verify(token)


def test_a_symmetric_or_unusable_key_in_the_set_is_never_used(clock: Clock):
    key = Key()
    keys = KeySet(key)
    secret = b"s" * 32
    keys.extra = [
        {"kty": "oct", "kid": "shared", "alg": "HS256", "k": b64url(secret)},
        {**Key().jwk, "kid": "no-alg", "alg": None},
        {**Key().jwk, "kid": "for-encryption", "use": "enc"},
        {**Key("RS256").jwk, "kid": "mislabelled", "alg": "ES256"},
        "not an object",
    ]
    verifier = verifier_for(keys, clock)
    forged = jwt.encode(make_claims(), secret, algorithm="HS256",
                        headers={"kid": "shared", "typ": "at+jwt"})
    with pytest.raises(InvalidToken):
        verifier.verify(forged)
    verifier.verify(key.token())  # the good key of the same set still works


def test_a_token_with_a_forged_signature_is_invalid(clock: Clock):
    key = Key()
    verifier = verifier_for(KeySet(key), clock)
    token = key.token(plan="free")
    header, _, signature = token.split(".")
    tampered = ".".join([header, b64url(json.dumps(make_claims(plan="team")).encode()),
                         signature])
    with pytest.raises(InvalidToken):
        verifier.verify(tampered)
    with pytest.raises(InvalidToken):
        verifier.verify("a" * 5000)
    with pytest.raises(InvalidToken):
        verifier.verify("not a jwt")
    with pytest.raises(MissingToken):
        verifier.verify("")


def test_a_key_set_that_cannot_be_fetched(clock: Clock):
    key = Key()
    keys = KeySet(key)
    keys.failing = True
    verifier = verifier_for(keys, clock, refetch_interval=30)
    with pytest.raises(KeysUnavailable):
        verifier.verify(key.token())
    with pytest.raises(KeysUnavailable):  # not retried at once
        verifier.verify(key.token())
    assert keys.fetches == 1

    clock.advance(30)
    keys.failing = False
    verifier.verify(key.token())
    # Later failures keep the keys already known (stale beats down), retried at most every 30 s.
    keys.failing = True
    clock.advance(1000)
    verifier.verify(key.token())
    verifier.verify(key.token())
    assert keys.fetches == 3


# -- over real HTTP -------------------------------------------------------------------------------


class JwksServer:
    """A local HTTP server in a thread: `routes[path] = (status, body, headers)`."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        routes, seen = self.routes, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                seen.append((self.path, dict(self.headers)))
                status, body, headers = routes.get(self.path, (404, b"{}", {}))
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = serving_thread(self.server, "jwks")
        self.thread.start()

    def json(self, path: str, body: Any, status: int = 200, **headers: str) -> None:
        self.routes[path] = (status, json.dumps(body).encode(), headers)

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()


@pytest.fixture
def jwks_server() -> Iterator[JwksServer]:
    server = JwksServer()
    try:
        yield server
    finally:
        server.stop()


def test_fetching_the_key_set_over_http(jwks_server: JwksServer):
    key = Key()
    jwks_server.json("/.well-known/jwks.json", {"keys": [key.jwk]})
    verifier = TokenVerifier(f"{jwks_server.url}/.well-known/jwks.json", ISSUER, AUDIENCE,
                             timeout=2)
    assert verifier.verify(key.token(plan="pro"))["plan"] == "pro"
    assert [path for path, _ in jwks_server.requests] == ["/.well-known/jwks.json"]


@pytest.mark.parametrize("status, body, headers", [
    (500, b'{"error": "boom"}', {}),
    (200, b"<html>not json</html>", {}),
    (302, b"", {"Location": "http://127.0.0.1:1/keys"}),  # never followed
])
def test_a_failing_key_endpoint_is_keys_unavailable(jwks_server: JwksServer, status: int,
                                                     body: bytes, headers: dict[str, str]):
    jwks_server.routes["/jwks"] = (status, body, headers)
    verifier = TokenVerifier(f"{jwks_server.url}/jwks", ISSUER, AUDIENCE, timeout=2)
    with pytest.raises(KeysUnavailable):
        verifier.verify(Key().token())


# -- the Flask guards -----------------------------------------------------------------------------


def guarded_app(verifier: TokenVerifier, plan_check_url: str | None = None) -> Flask:
    app = Flask(__name__)
    init_app(app, verifier, pricing_url="https://site.example/pricing",
             plan_check_url=plan_check_url, timeout=2)

    @app.get("/mine")
    @require_token
    def mine() -> dict[str, Any]:
        return {"sub": current_claims()["sub"]}

    @app.post("/sensitive")
    @require_token(mfa=True)
    def sensitive() -> dict[str, Any]:
        return {"ok": True}

    @app.post("/generate")
    @require_plan("pro", "team")
    def generate() -> dict[str, Any]:
        return {"made": True, "by": current_claims()["sub"]}

    @app.post("/teams-only")
    @require_plan("team", status=403, pricing_url="/teams")
    def teams_only() -> dict[str, Any]:
        return {"ok": True}

    return app


def test_require_token_answers_401_problems(clock: Clock):
    key = Key()
    client = guarded_app(verifier_for(KeySet(key), clock)).test_client()
    now = int(time.time())
    cases = [({}, "missing_token", "Bearer"),
             ({"Authorization": "Basic dXNlcjpwYXNz"}, "missing_token", "Bearer"),
             (bearer("junk"), "invalid_token", 'Bearer error="invalid_token"'),
             (bearer(Key().token()), "invalid_token", 'Bearer error="invalid_token"'),
             (bearer(key.token(exp=now - 60, iat=now - 3660, nbf=now - 3660)), "token_expired",
              'Bearer error="invalid_token"')]
    for headers, code, challenge in cases:
        response = client.get("/mine", headers=headers)
        assert response.status_code == 401
        assert response.mimetype == "application/problem+json"
        assert response.headers["WWW-Authenticate"] == challenge
        body = response.get_json()
        assert set(body) == {"type", "title", "status", "code", "detail"}
        assert (body["status"], body["code"], body["title"]) == (401, code, "Unauthorized")

    response = client.get("/mine", headers=bearer(key.token(sub="user-7")))
    assert response.status_code == 200 and response.get_json() == {"sub": "user-7"}
    response = client.get("/mine", headers={"Authorization": f"bearer   {key.token()}"})
    assert response.status_code == 200


def test_require_token_with_mfa_wants_a_sign_in_with_a_second_factor(clock: Clock):
    key = Key()
    client = guarded_app(verifier_for(KeySet(key), clock)).test_client()
    refused = client.post("/sensitive", headers=bearer(key.token()))
    assert refused.status_code == 403 and refused.get_json()["code"] == "mfa_required"
    assert client.post("/sensitive").status_code == 401
    strong = key.token(amr=["pwd", "otp", "mfa"], acr="aal2")
    assert client.post("/sensitive", headers=bearer(strong)).status_code == 200
    assert client.get("/mine", headers=bearer(strong)).status_code == 200


def test_require_plan_answers_402_or_403_with_the_pricing_link(clock: Clock):
    key = Key()
    client = guarded_app(verifier_for(KeySet(key), clock)).test_client()

    refused = client.post("/generate", headers=bearer(key.token(plan="free")))
    assert refused.status_code == 402
    assert refused.mimetype == "application/problem+json"
    assert refused.get_json() == {
        "type": "about:blank", "title": "Payment Required", "status": 402,
        "code": "upgrade_required",
        "detail": "The free plan does not include this. Upgrade to pro or team.",
        "pricing_url": "https://site.example/pricing", "plans": ["pro", "team"]}
    assert client.post("/generate").status_code == 401  # the token comes first

    for plan in ("pro", "team"):
        made = client.post("/generate", headers=bearer(key.token(plan=plan)))
        assert made.status_code == 200 and made.get_json()["made"] is True

    forbidden = client.post("/teams-only", headers=bearer(key.token(plan="pro")))
    assert forbidden.status_code == 403
    assert forbidden.get_json()["title"] == "Forbidden"
    assert forbidden.get_json()["pricing_url"] == "/teams"


def test_require_plan_asks_the_service_before_refusing(clock: Clock, jwks_server: JwksServer):
    """With plan_check_url, a token whose plan claim is stale (the person just upgraded) is
    checked once more against the service's /verify, with the same bearer token."""
    key = Key()
    client = guarded_app(verifier_for(KeySet(key), clock),
                         plan_check_url=f"{jwks_server.url}/verify").test_client()
    token = key.token(plan="free")

    jwks_server.json("/verify", {"valid": True, "user": {"plan": "pro"}})
    assert client.post("/generate", headers=bearer(token)).status_code == 200
    assert jwks_server.requests[-1][1]["Authorization"] == f"Bearer {token}"

    jwks_server.json("/verify", {"valid": True, "user": {"plan": "free"}})
    assert client.post("/generate", headers=bearer(token)).status_code == 402
    jwks_server.json("/verify", {"code": "session_revoked"}, status=401)
    assert client.post("/generate", headers=bearer(token)).status_code == 402
    jwks_server.routes["/verify"] = (200, b"not json", {})
    assert client.post("/generate", headers=bearer(token)).status_code == 402

    calls = len(jwks_server.requests)
    assert client.post("/generate", headers=bearer(key.token(plan="pro"))).status_code == 200
    assert len(jwks_server.requests) == calls  # an allowed plan never goes online


def test_the_guards_answer_503_when_no_keys_can_be_had(clock: Clock):
    keys = KeySet(Key())
    keys.failing = True
    client = guarded_app(verifier_for(keys, clock)).test_client()
    response = client.get("/mine", headers=bearer(Key().token()))
    assert response.status_code == 503
    assert response.get_json()["code"] == "keys_unavailable"
    assert response.headers["Retry-After"] == "30"


def test_require_plan_needs_plans_and_a_402_or_403():
    with pytest.raises(ValueError):
        require_plan()
    with pytest.raises(ValueError):
        require_plan("pro", status=401)
