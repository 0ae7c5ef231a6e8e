"""The signing keyring (app/domain/keys.py): created once, shared by processes, rotated safely.

DESIGN.md section 3: the embedded default creates its key once, atomically, so `gunicorn -w 4` on a
fresh instance never ends with workers signing with different keys; rotation keeps old public keys
until the tokens they signed have expired; the JWKS never holds anything private.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jwt
import pytest

from app.domain.keys import Keyring, SigningKey, generate_material
from app.domain.tokens import AccessTokens
from tests.conftest import bearer

PRIVATE_JWK_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}
HOUR = 3600


def keyring(path: Path, alg: str = "ES256", keep_for: int = HOUR) -> Keyring:
    return Keyring(alg, None, path, keep_for=keep_for)


def stored_kids(path: Path) -> list[str]:
    return [k["kid"] for k in json.loads(path.read_bytes())["keys"]]


# Creation -------------------------------------------------------------------------------------

def test_file_is_created_once(tmp_path):  # type: ignore[no-untyped-def]
    """A second keyring on the same path reads the first one's key; it does not write."""
    path = tmp_path / "jwt-keys.json"
    first = keyring(path)
    content, mtime = path.read_bytes(), os.stat(path).st_mtime_ns
    second = keyring(path)
    assert second.signing_key().kid == first.signing_key().kid
    assert path.read_bytes() == content
    assert os.stat(path).st_mtime_ns == mtime
    assert stored_kids(path) == [first.signing_key().kid]


def test_file_is_private_and_no_temporary_files_remain(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "instance" / "jwt-keys.json"
    keyring(path).rotate()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["jwt-keys.json"]


def _create_and_report(path: str, barrier: Any, results: Any) -> None:
    """Child process: wait for every sibling, then open the keyring at the same moment."""
    barrier.wait(timeout=60)
    results.put(Keyring("ES256", None, Path(path), keep_for=HOUR).signing_key().kid)


def test_concurrent_creation_agrees_on_one_key(tmp_path):  # type: ignore[no-untyped-def]
    """Eight processes racing to create the keyring all end up signing with the same key."""
    path = tmp_path / "jwt-keys.json"
    # fork is fast; spawn when threads are running (forking them is unsafe and warns).
    ctx = multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")
    barrier, results = ctx.Barrier(8), ctx.Queue()
    workers = [ctx.Process(target=_create_and_report, args=(str(path), barrier, results))
               for _ in range(8)]
    for worker in workers:
        worker.start()
    kids = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    results.close()
    results.join_thread()
    assert len(set(kids)) == 1
    assert stored_kids(path) == kids[:1]
    assert [p.name for p in tmp_path.iterdir()] == ["jwt-keys.json"]


# Rotation -------------------------------------------------------------------------------------

def test_rotate_puts_new_key_first_and_keeps_the_old(tmp_path):  # type: ignore[no-untyped-def]
    ring = keyring(tmp_path / "jwt-keys.json")
    old = ring.signing_key()
    new = ring.rotate()
    assert new.kid != old.kid
    assert ring.signing_key().kid == new.kid
    assert ring.verification_key(old.kid) is not None
    assert ring.verification_key(new.kid) is not None
    assert [k["kid"] for k in ring.jwks()["keys"]] == [new.kid, old.kid]


def test_rotation_survives_a_reload(tmp_path):  # type: ignore[no-untyped-def]
    """What rotate() wrote is what a fresh process reads."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path)
    old = ring.signing_key().kid
    new = ring.rotate().kid
    fresh = keyring(path)
    assert fresh.signing_key().kid == new
    assert fresh.verification_key(old) is not None


def test_other_instance_notices_rotation(tmp_path):  # type: ignore[no-untyped-def]
    """Another worker, already loaded, signs with the new key and verifies with it."""
    path = tmp_path / "jwt-keys.json"
    here, there = keyring(path), keyring(path)
    old = there.signing_key().kid
    new = here.rotate()
    assert there.signing_key().kid == new.kid != old
    assert there.verification_key(new.kid) is not None
    assert {k["kid"] for k in there.jwks()["keys"]} == {new.kid, old}


def test_other_instance_notices_rotation_with_coarse_timestamps(tmp_path):  # type: ignore[no-untyped-def]
    """As above, on a file system whose clock did not tick between the two writes."""
    path = tmp_path / "jwt-keys.json"
    here, there = keyring(path), keyring(path)
    before = os.stat(path).st_mtime_ns
    new = here.rotate()
    os.utime(path, ns=(before, before))  # the replaced file carries the same mtime
    assert there.verification_key(new.kid) is not None
    assert there.signing_key().kid == new.kid


def test_retired_keys_are_pruned_after_keep_for(tmp_path):  # type: ignore[no-untyped-def]
    """keep_for=0: the key retired by the first rotation has outlived it by the second."""
    ring = keyring(tmp_path / "jwt-keys.json", keep_for=0)
    first = ring.signing_key().kid
    second = ring.rotate().kid
    assert ring.verification_key(first) is not None  # just retired: still verifies
    third = ring.rotate().kid
    assert ring.verification_key(first) is None
    assert first not in {k["kid"] for k in ring.jwks()["keys"]}
    assert ring.verification_key(second) is not None  # retired only now
    assert [k["kid"] for k in ring.jwks()["keys"]] == [third, second]


def test_retired_keys_are_kept_within_keep_for(tmp_path):  # type: ignore[no-untyped-def]
    """The control for the test above: with an hour to go, nothing is pruned."""
    ring = keyring(tmp_path / "jwt-keys.json", keep_for=HOUR)
    first = ring.signing_key().kid
    second = ring.rotate().kid
    third = ring.rotate().kid
    assert [k["kid"] for k in ring.jwks()["keys"]] == [third, second, first]


def test_keyring_refuses_a_file_of_another_algorithm(tmp_path):  # type: ignore[no-untyped-def]
    """Changing SVC_JWT_ALG never silently signs with a key of the old algorithm: signing
    says to rotate, while tokens of the old key still verify."""
    path = tmp_path / "jwt-keys.json"
    old_kid = keyring(path, "ES256").signing_key().kid
    switched = keyring(path, "EdDSA")
    assert switched.verification_key(old_kid) is not None
    with pytest.raises(RuntimeError, match="keys rotate"):
        switched.signing_key()


# The JWKS -------------------------------------------------------------------------------------

@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_jwks_has_no_private_parts(tmp_path, alg):  # type: ignore[no-untyped-def]
    ring = keyring(tmp_path / "jwt-keys.json", alg)
    ring.rotate()
    keys = ring.jwks()["keys"]
    assert len(keys) == 2
    for jwk in keys:
        assert not PRIVATE_JWK_MEMBERS & set(jwk), jwk
        assert jwk["alg"] == alg and jwk["use"] == "sig" and jwk["kid"]


def test_hs256_keyring_publishes_nothing(tmp_path):  # type: ignore[no-untyped-def]
    ring = keyring(tmp_path / "jwt-keys.json", "HS256")
    ring.rotate()
    assert ring.jwks() == {"keys": []}
    assert len(ring.signing_key().private) >= 32


# Static keys (SVC_JWT_KEYS) -------------------------------------------------------------------

def test_static_keys_cannot_be_rotated(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "jwt-keys.json"
    pems = [generate_material("ES256"), generate_material("ES256")]
    ring = Keyring("ES256", pems, path, keep_for=HOUR)
    with pytest.raises(RuntimeError):
        ring.rotate()
    assert not path.exists()  # configured keys never touch the instance folder
    again = Keyring("ES256", pems, path, keep_for=HOUR)
    assert ring.signing_key().kid == again.signing_key().kid  # the kid follows from the key
    assert [k["kid"] for k in ring.jwks()["keys"]] == [k.kid for k in (
        SigningKey.from_material("ES256", pem, 0) for pem in pems)]


def test_static_key_of_the_wrong_type_is_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="ES256"):
        Keyring("ES256", [generate_material("EdDSA")], tmp_path / "k.json", keep_for=HOUR)


def test_short_hs256_secret_is_refused(tmp_path):  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="256"):
        Keyring("HS256", ["c2hvcnQ"], tmp_path / "k.json", keep_for=HOUR)


# Other algorithms -----------------------------------------------------------------------------

@pytest.mark.parametrize("alg", ["EdDSA", "RS256"])
def test_other_algorithms_sign_and_verify(tmp_path, alg):  # type: ignore[no-untyped-def]
    """A token issued with the keyring verifies, with the JWKS as a client site would use it."""
    ring = keyring(tmp_path / "jwt-keys.json", alg)
    tokens = AccessTokens(ring, issuer="https://auth.example", audience="svc", ttl=HOUR,
                          leeway=5)
    now = datetime.now(UTC).replace(microsecond=0)
    issued = tokens.issue(user_id="u-1", session_id="s-1", plan="free", now=now)
    header = jwt.get_unverified_header(issued.token)
    assert header == {"alg": alg, "kid": ring.signing_key().kid, "typ": "at+jwt"}
    assert tokens.verify(issued.token, now).session_id == "s-1"
    [jwk] = ring.jwks()["keys"]
    assert jwk["kty"] == {"EdDSA": "OKP", "RS256": "RSA"}[alg]
    assert not PRIVATE_JWK_MEMBERS & set(jwk)
    public = jwt.PyJWK(jwk)
    claims = jwt.decode(issued.token, public, algorithms=[alg], audience="svc")
    assert claims["sid"] == "s-1"


# Through the API and the CLI ------------------------------------------------------------------

def test_cli_rotation_end_to_end(app, client, user, login):  # type: ignore[no-untyped-def]
    """`keys rotate`: tokens signed before still verify; new logins use the new kid; the JWKS
    lists both."""
    old_token = login(user)["access_token"]
    old_kid = jwt.get_unverified_header(old_token)["kid"]

    result = app.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    assert "New signing key" in result.output

    response = client.get("/api/v2/auth/verify", headers=bearer(old_token))
    assert response.status_code == 200, response.get_json()

    new_token = login(user)["access_token"]
    new_kid = jwt.get_unverified_header(new_token)["kid"]
    assert new_kid != old_kid
    assert new_kid in result.output
    assert client.get("/api/v2/auth/verify", headers=bearer(new_token)).status_code == 200

    published = [k["kid"] for k in client.get("/.well-known/jwks.json").get_json()["keys"]]
    assert published == [new_kid, old_kid]


def _another_app(instance_path: str, **config: Any) -> Any:
    from app import create_app

    return create_app({"INSTANCE_PATH": instance_path, "SQLALCHEMY_DATABASE_URI": "sqlite://",
                       "SECRET_KEY": "test", "RATELIMIT_ENABLED": False, **config})


def test_cli_rotation_refused_for_static_keys(tmp_path):  # type: ignore[no-untyped-def]
    """A configured keyring is rotated by editing SVC_JWT_KEYS: the command says so and fails."""
    static = _another_app(str(tmp_path / "instance"), JWT_KEYS=[generate_material("ES256")])
    result = static.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code != 0
    assert "SVC_JWT_KEYS" in result.output
    assert not (tmp_path / "instance" / "jwt-keys.json").exists()


def test_cli_rotation_switches_algorithm(app):  # type: ignore[no-untyped-def]
    """The documented way to change algorithm: set SVC_JWT_ALG, run `keys rotate`. The old
    ES256 key must keep verifying until its tokens expire."""
    with app.app_context():
        from app.domain.services import services

        old_kid = services().access_tokens.keyring.signing_key().kid
    switched = _another_app(app.instance_path, JWT_ALG="EdDSA")
    result = switched.test_cli_runner().invoke(args=["keys", "rotate"])
    assert result.exit_code == 0, result.output
    with switched.app_context():
        from app.domain.services import services

        ring = services().access_tokens.keyring
        assert ring.signing_key().alg == "EdDSA"
        old = ring.verification_key(old_kid)
        assert old is not None and old.alg == "ES256"
