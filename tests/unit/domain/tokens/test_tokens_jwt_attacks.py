"""Attacks on the access token, each against GET /api/v2/auth/verify (SECURITY.md section D).

Every forged token carries a real session's `sub` and `sid`, so that a rejection is caused by the
one thing the test changed and not by an unknown session. `test_forged_control_is_accepted` shows
that the forging itself is right: the same recipe with nothing changed is accepted.
"""

from __future__ import annotations

import base64
import hmac
import json
import socket
import threading
from collections.abc import Callable
from hashlib import sha256
from typing import Any

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from jwt.algorithms import ECAlgorithm, get_default_algorithms

from app.domain.services import services
from app.infra.keys import SigningKey
from tests.support.encoding import b64url
from tests.support.http import bearer

VERIFY = "/api/v2/auth/verify"
CLAIMS = {"iss", "aud", "sub", "sid", "plan", "jti", "iat", "nbf", "exp"}
DROP = object()  # a claim or header value meaning "leave this member out"


# Building tokens by hand ---------------------------------------------------------------------


def segment(obj: Any) -> str:
    return b64url(json.dumps(obj, separators=(",", ":")).encode())


def by_hand(header: dict[str, Any], claims: dict[str, Any],
            sign: Callable[[bytes], bytes] = lambda _msg: b"") -> str:
    """A compact JWS built without any library checks; `sign` gets the signing input."""
    signing_input = f"{segment(header)}.{segment(claims)}"
    return f"{signing_input}.{b64url(sign(signing_input.encode()))}"


def hmac_signer(secret: bytes) -> Callable[[bytes], bytes]:
    return lambda msg: hmac.new(secret, msg, sha256).digest()


# The order of the P-256 group (SEC 2, 2.4.2). An ES256 signature r||s has a twin, r||(n - s),
# valid for the same message: the service issues and accepts only the low one (s <= n/2).
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def s_of(signature: bytes) -> int:
    return int.from_bytes(signature[32:], "big")


def flipped_s(signature: bytes) -> bytes:
    return signature[:32] + (P256_ORDER - s_of(signature)).to_bytes(32, "big")


def low_s(signature: bytes) -> bytes:
    return signature if s_of(signature) <= P256_ORDER // 2 else flipped_s(signature)


def signature_of(token: str) -> bytes:
    encoded = token.rsplit(".", 1)[1]
    return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))


def with_signature(token: str, signature: bytes) -> str:
    return f"{token.rsplit('.', 1)[0]}.{b64url(signature)}"


def key_signer(alg: str, private_key: Any) -> Callable[[bytes], bytes]:
    """Signs as the service does: an ES256 signature in its low-S form."""
    algorithm = get_default_algorithms()[alg]
    if alg == "ES256":
        return lambda msg: low_s(algorithm.sign(msg, private_key))
    return lambda msg: algorithm.sign(msg, private_key)


def parts(token: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    header, payload, signature = token.split(".")
    padded = [s + "=" * (-len(s) % 4) for s in (header, payload)]
    return (json.loads(base64.urlsafe_b64decode(padded[0])),
            json.loads(base64.urlsafe_b64decode(padded[1])), signature)


def merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = {**base, **changes}
    return {name: value for name, value in out.items() if value is not DROP}


def foreign_ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


# Fixtures -------------------------------------------------------------------------------------

@pytest.fixture
def service_key(app) -> SigningKey:  # type: ignore[no-untyped-def]
    """The key the service signs with right now (ES256 by default)."""
    with app.app_context():
        return services().access_tokens.keyring.signing_key()


@pytest.fixture
def session_claims(user, login) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The claims of a real access token: a live session to aim forged tokens at."""
    claims: dict[str, Any] = jwt.decode(login(user)["access_token"],
                                        options={"verify_signature": False})
    return claims


@pytest.fixture
def valid_claims(session_claims, clock) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Claims the service must accept: the real session, issued now, with a fresh jti."""
    now = int(clock.now.timestamp())
    return {**session_claims, "jti": "forged-by-the-test", "iat": now, "nbf": now,
            "exp": now + 3600}


@pytest.fixture
def good_header(service_key) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {"alg": service_key.alg, "kid": service_key.kid, "typ": "at+jwt"}


@pytest.fixture
def forge(service_key, valid_claims, good_header):  # type: ignore[no-untyped-def]
    """Sign with the service's real key; `claims`/`header` change or DROP members."""
    def make(claims: dict[str, Any] | None = None, header: dict[str, Any] | None = None) -> str:
        return by_hand(merged(good_header, header or {}), merged(valid_claims, claims or {}),
                       key_signer(service_key.alg, service_key.private))
    return make


@pytest.fixture
def no_network(monkeypatch) -> list[Any]:  # type: ignore[no-untyped-def]
    """Record (and refuse) any attempt to open a connection from the test's thread, where the
    test client serves the request. Other threads of the process (an earlier test's Redis
    subscriber reconnecting, say) connect as usual: theirs are not the request's."""
    attempts: list[Any] = []
    test_thread = threading.current_thread()

    def refusing(real: Any) -> Any:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not test_thread:
                return real(*args, **kwargs)
            attempts.append(args[1:] if args and isinstance(args[0], socket.socket) else args)
            raise OSError("the test forbids outbound connections")
        return refuse

    for owner, name in ((socket.socket, "connect"), (socket.socket, "connect_ex"),
                        (socket, "create_connection"), (socket, "getaddrinfo")):
        monkeypatch.setattr(owner, name, refusing(getattr(owner, name)))
    return attempts


def assert_rejected(response: Any, code: str = "invalid_token") -> None:
    """401, problem+json with the expected code, and a Bearer challenge (RFC 6750 section 3)."""
    assert response.status_code == 401, response.get_data(as_text=True)[:300]
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["status"] == 401
    assert body["code"] == code, body
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")


def verify(client, token: str):  # type: ignore[no-untyped-def]
    return client.get(VERIFY, headers=bearer(token))


# What the service issues ----------------------------------------------------------------------

def test_issued_token_header_and_claims(client, user, login, service_key, app):  # type: ignore[no-untyped-def]
    """ES256 by default, our kid, typ at+jwt, a 3600 s lifetime and only the documented claims."""
    header, claims, _ = parts(login(user)["access_token"])
    assert header == {"alg": "ES256", "kid": service_key.kid, "typ": "at+jwt"}
    assert set(claims) == CLAIMS
    assert claims["exp"] - claims["iat"] == 3600
    assert claims["nbf"] == claims["iat"]
    assert claims["iss"] == app.config["PUBLIC_URL"]
    assert claims["aud"] == "svc"
    assert claims["sub"] == user.id


def test_forged_control_is_accepted(client, forge, service_key, valid_claims):  # type: ignore[no-untyped-def]
    """The recipe every negative test starts from is itself accepted: the rejections mean
    something. Both the by-hand signer and pyjwt's own encoder produce an accepted token."""
    response = verify(client, forge())
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["session_id"] == valid_claims["sid"]
    with_pyjwt = jwt.encode(valid_claims, service_key.private, algorithm=service_key.alg,
                            headers={"kid": service_key.kid, "typ": "at+jwt"})
    # pyjwt (through cryptography) gives the high-S form half the time: put it in the low one.
    with_pyjwt = with_signature(with_pyjwt, low_s(signature_of(with_pyjwt)))
    assert verify(client, with_pyjwt).status_code == 200


def test_nbf_within_the_leeway_is_accepted(client, forge, clock):  # type: ignore[no-untyped-def]
    """The 5 s leeway the next test goes beyond."""
    now = int(clock.now.timestamp())
    assert verify(client, forge({"nbf": now + 5})).status_code == 200


# alg none, other algorithms, key confusion -----------------------------------------------------

@pytest.mark.parametrize("alg", ["none", "None", "NONE", "nOnE"])
def test_alg_none_in_any_case(client, valid_claims, service_key, alg):  # type: ignore[no-untyped-def]
    token = by_hand({"alg": alg, "kid": service_key.kid, "typ": "at+jwt"}, valid_claims)
    assert token.endswith(".")
    assert_rejected(verify(client, token))


def test_alg_none_without_kid(client, valid_claims):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, by_hand({"alg": "none", "typ": "at+jwt"}, valid_claims)))


def _public_key_forms(key: SigningKey, jwks: dict[str, Any]) -> dict[str, bytes]:
    """Every way an attacker might have the service's public key, as an HMAC secret."""
    pem = key.public.public_bytes(serialization.Encoding.PEM,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    [jwk] = [k for k in jwks["keys"] if k["kid"] == key.kid]
    return {
        "pem": pem,
        "pem-no-newline": pem.rstrip(b"\n"),
        "der": key.public.public_bytes(serialization.Encoding.DER,
                                       serialization.PublicFormat.SubjectPublicKeyInfo),
        "openssh": key.public.public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH),
        "jwk-json": json.dumps(jwk).encode(),
        "jwk-json-compact": json.dumps(jwk, separators=(",", ":")).encode(),
        "jwk-json-pyjwt": ECAlgorithm.to_jwk(key.public).encode(),
        "jwks-document": json.dumps(jwks).encode(),
    }


def test_hs256_signed_with_the_public_key(client, service_key, valid_claims):  # type: ignore[no-untyped-def]
    """Key confusion (CVE-2022-29217 and kin): the public key, in any form, used as an HMAC
    secret."""
    jwks = client.get("/.well-known/jwks.json").get_json()
    forms = _public_key_forms(service_key, jwks)
    header = {"alg": "HS256", "kid": service_key.kid, "typ": "at+jwt"}
    for name, secret in forms.items():
        response = verify(client, by_hand(header, valid_claims, hmac_signer(secret)))
        assert response.status_code == 401, name
        assert_rejected(response)


def _foreign_key(alg: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    return {
        "ES384": lambda: ec.generate_private_key(ec.SECP384R1()),
        "ES256K": lambda: ec.generate_private_key(ec.SECP256K1()),
        "PS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
        "EdDSA": ed25519.Ed25519PrivateKey.generate,
    }[alg]()


@pytest.mark.parametrize("alg", ["HS384", "HS512"])
def test_other_hmac_algorithms_with_the_public_key(client, service_key, valid_claims, alg):  # type: ignore[no-untyped-def]
    pem = service_key.public.public_bytes(serialization.Encoding.PEM,
                                          serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = {"HS384": "sha384", "HS512": "sha512"}[alg]
    token = by_hand({"alg": alg, "kid": service_key.kid, "typ": "at+jwt"}, valid_claims,
                    lambda msg: hmac.new(pem, msg, digest).digest())
    assert_rejected(verify(client, token))


@pytest.mark.parametrize("alg", ["ES384", "ES256K", "PS256", "RS256", "EdDSA"])
def test_other_asymmetric_algorithms_with_our_kid(client, service_key, valid_claims, alg):  # type: ignore[no-untyped-def]
    """Only the key's own algorithm is allowed, whatever key the attacker signs with."""
    token = by_hand({"alg": alg, "kid": service_key.kid, "typ": "at+jwt"}, valid_claims,
                    key_signer(alg, _foreign_key(alg)))
    assert_rejected(verify(client, token))


def test_foreign_es256_key_with_our_kid(client, service_key, valid_claims):  # type: ignore[no-untyped-def]
    token = jwt.encode(valid_claims, foreign_ec_key(), algorithm="ES256",
                       headers={"kid": service_key.kid, "typ": "at+jwt"})
    assert_rejected(verify(client, token))


# Keys named by the token: jwk, jku, x5u, x5c ---------------------------------------------------

def _self_signed_cert(private_key: ec.EllipticCurvePrivateKey) -> bytes:
    from datetime import UTC, datetime, timedelta

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "attacker")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(private_key.public_key()).serial_number(1)
            .not_valid_before(now).not_valid_after(now + timedelta(days=1))
            .sign(private_key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.DER)


@pytest.mark.parametrize("use_our_kid", [True, False], ids=["our-kid", "attacker-kid"])
@pytest.mark.parametrize("member", ["jwk", "jku", "x5u", "x5c"])
def test_token_supplied_keys_are_ignored(client, service_key, valid_claims, no_network,  # type: ignore[no-untyped-def]
                                         member, use_our_kid):
    """An embedded key, or a URL to fetch one from, never chooses the key: 401 at once, and
    not even an attempt to connect to 127.0.0.1:1."""
    attacker = foreign_ec_key()
    attacker_jwk = ECAlgorithm.to_jwk(attacker.public_key(), as_dict=True)
    value = {
        "jwk": attacker_jwk,
        "jku": "http://127.0.0.1:1/jwks",
        "x5u": "http://127.0.0.1:1/cert.pem",
        "x5c": [base64.b64encode(_self_signed_cert(attacker)).decode()],
    }[member]
    header = {"alg": "ES256", "typ": "at+jwt", member: value,
              "kid": service_key.kid if use_our_kid else "attacker-key"}
    token = by_hand(header, valid_claims, key_signer("ES256", attacker))
    assert_rejected(verify(client, token))
    assert no_network == []


# kid ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kid", [
    "../../etc/passwd",
    "/dev/zero",
    "k" * 10 * 1024,
    123,
    None,
    ["a"],
    {"kid": "x"},
    "",
    "x' OR '1'='1",
    "\u0000",
    DROP,
], ids=["traversal", "dev-zero", "10KB", "number", "null", "list", "object", "empty", "sql",
        "nul", "missing"])
def test_malicious_kid(client, forge, kid):  # type: ignore[no-untyped-def]
    """A kid only ever names one of our keys: anything else is a clean 401, never a 500."""
    assert_rejected(verify(client, forge(header={"kid": kid})))


# Claims ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("iss", [
    "https://evil.example", "http://127.0.0.1:5000/", "HTTP://127.0.0.1:5000", "", 1,
    ["http://127.0.0.1:5000"],
])
def test_wrong_issuer(client, forge, iss):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, forge({"iss": iss})))


@pytest.mark.parametrize("aud", ["other-site", "SVC", "", ["other-site"], []])
def test_wrong_audience(client, forge, aud):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, forge({"aud": aud})))


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat", "iss", "aud", "sub", "sid", "jti"])
def test_missing_required_claim(client, forge, claim):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, forge({claim: DROP})))


@pytest.mark.parametrize("claim", ["exp", "nbf", "iat"])
@pytest.mark.parametrize("kind", ["string", "float", "bool"])
def test_time_claims_must_be_integers(client, forge, valid_claims, claim, kind):  # type: ignore[no-untyped-def]
    value = valid_claims[claim]
    wrong = {"string": str(value), "float": value + 0.5, "bool": True}[kind]
    assert_rejected(verify(client, forge({claim: wrong})))


def test_expired_by_61_seconds(client, user, login, clock):  # type: ignore[no-untyped-def]
    """Both a token already verified (and so cached) and a fresh one expire on the clock."""
    seen, unseen = login(user)["access_token"], login(user)["access_token"]
    clock.advance(3599)
    assert verify(client, seen).status_code == 200
    clock.advance(61 + 1)  # now exp + 61
    assert_rejected(verify(client, seen), "token_expired")
    assert_rejected(verify(client, unseen), "token_expired")


def test_nbf_in_the_future(client, forge, clock):  # type: ignore[no-untyped-def]
    now = int(clock.now.timestamp())
    assert_rejected(verify(client, forge({"nbf": now + 6})))
    assert_rejected(verify(client, forge({"nbf": now + 600, "iat": now + 600,
                                          "exp": now + 4200})))


def test_iat_in_the_future(client, forge, clock):  # type: ignore[no-untyped-def]
    now = int(clock.now.timestamp())
    assert_rejected(verify(client, forge({"iat": now + 60, "exp": now + 3600})))


def test_lifetime_longer_than_an_hour(client, forge, clock):  # type: ignore[no-untyped-def]
    now = int(clock.now.timestamp())
    assert_rejected(verify(client, forge({"exp": now + 3601})))
    assert_rejected(verify(client, forge({"iat": now - 1, "nbf": now - 1, "exp": now + 3600})))
    assert_rejected(verify(client, forge({"exp": now + 10 * 365 * 86400})))


# Tampering ------------------------------------------------------------------------------------

def test_tampered_payload_keeps_old_signature(client, user, login):  # type: ignore[no-untyped-def]
    token = login(user)["access_token"]
    header, claims, signature = parts(token)
    assert claims["plan"] == "free"
    tampered = f"{token.split('.')[0]}.{segment({**claims, 'plan': 'pro'})}.{signature}"
    assert_rejected(verify(client, tampered))
    assert verify(client, token).status_code == 200  # the original is fine


@pytest.mark.parametrize("cut", ["empty-signature", "two-segments", "junk-signature"])
def test_stripped_signature(client, user, login, cut):  # type: ignore[no-untyped-def]
    token = login(user)["access_token"]
    head_and_body = token.rsplit(".", 1)[0]
    stripped = {"empty-signature": head_and_body + ".", "two-segments": head_and_body,
                "junk-signature": head_and_body + "." + b64url(b"\x00" * 64)}[cut]
    assert_rejected(verify(client, stripped))


@pytest.mark.parametrize("typ", ["JWT", "jwt", "refresh", "", DROP])
def test_typ_other_than_at_jwt(client, forge, typ):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, forge(header={"typ": typ})))


def test_refresh_token_is_not_a_bearer_token(client, user, login):  # type: ignore[no-untyped-def]
    assert_rejected(verify(client, login(user)["refresh_token"]))


@pytest.mark.parametrize("token", ["a", "a.b", "a.b.c", "....", "e30.e30.", "e30.e30.e30",
                                   "x" * 100_000], ids=lambda t: t[:10])
def test_garbage_tokens(client, token):  # type: ignore[no-untyped-def]
    """Malformed input is a 401, never a 500."""
    assert_rejected(verify(client, token))


# Where the token may come from ----------------------------------------------------------------

def test_token_in_query_string_is_ignored(client, user, login):  # type: ignore[no-untyped-def]
    token = login(user)["access_token"]
    response = client.get(f"{VERIFY}?access_token={token}")
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "missing_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_token_in_form_body_is_ignored(client, user, login):  # type: ignore[no-untyped-def]
    token = login(user)["access_token"]
    response = client.get(VERIFY, data={"access_token": token})
    assert response.status_code == 401
    assert response.get_json()["code"] == "missing_token"


@pytest.mark.parametrize("header", ["Basic xyz", "Basic YWRhOnB3", "Token abc", "Bearer",
                                    "Bearer a b"])
def test_other_schemes_and_shapes(client, header):  # type: ignore[no-untyped-def]
    """RFC 6750 section 3.1 lets an unsupported scheme go without an error code, so
    missing_token is as right as invalid_token here; it must still be a Bearer challenge."""
    response = client.get(VERIFY, headers={"Authorization": header})
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] in ("invalid_token", "missing_token")
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_basic_scheme_with_a_valid_token_is_refused(client, user, login):  # type: ignore[no-untyped-def]
    token = login(user)["access_token"]
    response = client.get(VERIFY, headers={"Authorization": f"Basic {token}"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


# One token, one string; retired keys (issue 12 item 8) ----------------------------------------

def test_high_s_twin_of_a_valid_token_is_refused(client, user, login, service_key):  # type: ignore[no-untyped-def]
    """One token, one string: r||(n - s) is a valid signature of the same token (pyjwt accepts
    it), so it would be a second string for it. The service refuses it, cached original or not."""
    token = login(user)["access_token"]
    assert verify(client, token).status_code == 200
    twin = with_signature(token, flipped_s(signature_of(token)))
    assert twin != token
    jwt.decode(twin, service_key.public, algorithms=["ES256"], audience="svc",
               options={"verify_exp": False})  # a genuine signature, to a library
    assert_rejected(verify(client, twin))
    assert verify(client, token).status_code == 200


def test_padded_signature_is_refused(client, user, login):  # type: ignore[no-untyped-def]
    """pyjwt accepts base64 padding on the signature: another second string for one token."""
    token = login(user)["access_token"]
    assert len(token.rsplit(".", 1)[1]) % 4 == 2  # so "==" is well-formed padding
    assert_rejected(verify(client, token + "=="))
    assert verify(client, token).status_code == 200


def test_issued_tokens_are_low_s(app, clock):  # type: ignore[no-untyped-def]
    """cryptography signs with a high S about half the time; the service normalises it."""
    with app.app_context():
        tokens = services().access_tokens
        issued = [tokens.issue(user_id="u-1", session_id=f"s-{n}", plan="free", now=clock.now)
                  for n in range(200)]
        for n, token in enumerate(issued):
            assert s_of(signature_of(token.token)) <= P256_ORDER // 2
            assert tokens.verify(token.token, clock.now).session_id == f"s-{n}"


def test_a_retired_key_cannot_mint_new_tokens(app, client, user, login, forge, clock):  # type: ignore[no-untyped-def]
    """Someone holding an old (retired) key signs a fresh token with it: refused when its iat
    is more than the leeway after the retirement. What the key signed before still works."""
    before = login(user)["access_token"]
    result = app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    retired_at = int(clock.now.timestamp())
    clock.advance(60)
    now = int(clock.now.timestamp())

    def minted(issued_at: int) -> str:  # `forge` signs with the key of before the rotation
        return forge({"iat": issued_at, "nbf": issued_at, "exp": issued_at + 3600})

    assert_rejected(verify(client, minted(now)))
    assert_rejected(verify(client, minted(retired_at + 6)))
    assert verify(client, minted(retired_at + 5)).status_code == 200  # within the leeway
    assert verify(client, minted(retired_at - 60)).status_code == 200
    assert verify(client, before).status_code == 200


# The same defences with a shared secret (SVC_JWT_ALG=HS256) ------------------------------------

class TestHS256:
    """An HS256 service: asymmetric tokens never verify, and every claim check still holds."""

    @pytest.fixture
    def settings(self) -> dict[str, Any]:
        return {"JWT_ALG": "HS256"}

    def test_issued_token(self, client, user, login, service_key):  # type: ignore[no-untyped-def]
        header, claims, _ = parts(login(user)["access_token"])
        assert header == {"alg": "HS256", "kid": service_key.kid, "typ": "at+jwt"}
        assert set(claims) == CLAIMS
        assert claims["exp"] - claims["iat"] == 3600
        assert isinstance(service_key.private, bytes) and len(service_key.private) >= 32

    def test_no_keys_published(self, client):  # type: ignore[no-untyped-def]
        assert client.get("/.well-known/jwks.json").get_json() == {"keys": []}

    def test_forged_control_is_accepted(self, client, forge):  # type: ignore[no-untyped-def]
        assert verify(client, forge()).status_code == 200

    def test_es256_token_with_our_kid(self, client, service_key, valid_claims):  # type: ignore[no-untyped-def]
        token = jwt.encode(valid_claims, foreign_ec_key(), algorithm="ES256",
                           headers={"kid": service_key.kid, "typ": "at+jwt"})
        assert_rejected(verify(client, token))

    def test_other_secret_with_our_kid(self, client, service_key, valid_claims):  # type: ignore[no-untyped-def]
        token = by_hand({"alg": "HS256", "kid": service_key.kid, "typ": "at+jwt"}, valid_claims,
                        hmac_signer(b"s" * 32))
        assert_rejected(verify(client, token))

    @pytest.mark.parametrize("alg", ["none", "NONE", "HS512"])
    def test_other_algorithms(self, client, service_key, valid_claims, alg):  # type: ignore[no-untyped-def]
        sign = (hmac_signer(service_key.private) if alg.startswith("HS")
                else (lambda _msg: b""))
        token = by_hand({"alg": alg, "kid": service_key.kid, "typ": "at+jwt"}, valid_claims,
                        sign)
        assert_rejected(verify(client, token))

    def test_claim_checks(self, client, forge, clock):  # type: ignore[no-untyped-def]
        now = int(clock.now.timestamp())
        assert_rejected(verify(client, forge({"exp": now + 3601})))
        assert_rejected(verify(client, forge({"aud": "other-site"})))
        assert_rejected(verify(client, forge({"iss": "https://evil.example"})))
        assert_rejected(verify(client, forge({"exp": DROP})))
        assert_rejected(verify(client, forge({"nbf": now + 6})))
        assert_rejected(verify(client, forge(header={"typ": "JWT"})))

    def test_expiry(self, client, user, login, clock):  # type: ignore[no-untyped-def]
        token = login(user)["access_token"]
        clock.advance(3600 + 61)
        assert_rejected(verify(client, token), "token_expired")
