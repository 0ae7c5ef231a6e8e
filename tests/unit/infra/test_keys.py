"""The signing keyring (infra/keys.py): created once, shared by processes, rotated safely.

DESIGN.md section 3: the embedded default creates its key once, atomically, so `gunicorn -w 4` on a
fresh instance never ends with workers signing with different keys; rotation keeps old public keys
until the tokens they signed have expired; the JWKS never holds anything private. Issue 12 item 8:
a retired key is dropped once it has outlived its tokens, even by a worker that only reads the
file, and `revoke` removes a leaked key from every process at once, cached tokens included.
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

from app.domain.tokens.errors import InvalidToken
from app.domain.tokens.tokens import AccessTokens
from app.extensions import db
from app.infra import low_s
from app.infra.keys import Keyring, SigningKey, generate_material
from tests.support.apps import FakeClock
from tests.support.http import bearer

PRIVATE_JWK_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}
HOUR = 3600


def keyring(path: Path, alg: str = "ES256", keep_for: int = HOUR,
            clock: FakeClock | None = None) -> Keyring:
    """A keyring on `path`; on the test's clock when given one, else on the wall clock."""
    if clock is None:
        return Keyring(alg, None, path, keep_for=keep_for)
    return Keyring(alg, None, path, keep_for=keep_for, clock=lambda: clock.now.timestamp())


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


def test_retired_keys_are_pruned_after_keep_for(tmp_path, clock):  # type: ignore[no-untyped-def]
    """The key retired by the first rotation has outlived its tokens an hour later: the second
    rotation leaves it out of the file, and nothing verifies with it."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, keep_for=HOUR, clock=clock)
    first = ring.signing_key().kid
    second = ring.rotate().kid
    assert ring.verification_key(first) is not None  # just retired: still verifies
    clock.advance(HOUR)
    third = ring.rotate().kid
    assert ring.verification_key(first) is None
    assert first not in {k["kid"] for k in ring.jwks()["keys"]}
    assert ring.verification_key(second) is not None  # retired only now
    assert [k["kid"] for k in ring.jwks()["keys"]] == [third, second]
    assert stored_kids(path) == [third, second]


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


# Retirement and revocation (issue 12 item 8) ----------------------------------------------------

def test_outlived_retired_keys_are_dropped_on_load(tmp_path, clock):  # type: ignore[no-untyped-def]
    """A worker that starts after a retired key has outlived its tokens never verifies with it,
    though the file still lists it: the file is pruned on its next write."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, clock=clock)
    first = ring.signing_key().kid
    second = ring.rotate().kid
    clock.advance(HOUR - 1)
    assert keyring(path, clock=clock).verification_key(first) is not None  # the control
    clock.advance(1)
    fresh = keyring(path, clock=clock)
    assert fresh.verification_key(first) is None
    assert [k.kid for k in fresh.in_force()] == [second]
    assert [k["kid"] for k in fresh.jwks()["keys"]] == [second]
    assert stored_kids(path) == [second, first]
    third = fresh.rotate().kid
    assert stored_kids(path) == [third, second]


def test_a_running_keyring_drops_a_key_once_it_has_outlived_its_tokens(tmp_path, clock):  # type: ignore[no-untyped-def]
    """The same for a worker that loaded the file before: no rotation needs to happen."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, clock=clock)
    first = ring.signing_key().kid
    ring.rotate()
    assert ring.verification_key(first) is not None
    clock.advance(HOUR)
    assert ring.verification_key(first) is None
    assert first not in {k["kid"] for k in ring.jwks()["keys"]}


def test_revoke_removes_a_key_from_every_process(tmp_path, clock):  # type: ignore[no-untyped-def]
    """A retired key that leaked: revoked in one process, gone from another within a second,
    and from the file."""
    path = tmp_path / "jwt-keys.json"
    here, there = keyring(path, clock=clock), keyring(path, clock=clock)
    leaked = here.signing_key().kid
    current = here.rotate().kid
    assert there.verification_key(leaked) is not None
    assert here.revoke(leaked) is None  # not the signing key: nothing replaces it
    assert here.verification_key(leaked) is None
    clock.advance(1)
    assert there.verification_key(leaked) is None
    assert there.verification_key(current) is not None
    assert there.signing_key().kid == current
    assert stored_kids(path) == [current]


def test_revoking_the_signing_key_puts_a_new_one_in_its_place(tmp_path, clock):  # type: ignore[no-untyped-def]
    """In the same write: no moment without a signing key, and the retired keys stay."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, clock=clock)
    retired = ring.signing_key().kid
    leaked = ring.rotate().kid
    replacement = ring.revoke(leaked)
    assert replacement is not None and replacement.kid not in {leaked, retired}
    assert ring.signing_key().kid == replacement.kid
    assert ring.verification_key(leaked) is None
    assert ring.verification_key(retired) is not None
    assert stored_kids(path) == [replacement.kid, retired]
    assert keyring(path, clock=clock).signing_key().kid == replacement.kid


def test_revoke_of_an_unknown_kid_changes_nothing(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path)
    content = path.read_bytes()
    with pytest.raises(LookupError, match="keys list"):
        ring.revoke("no-such-kid")
    assert path.read_bytes() == content


def test_static_keys_cannot_be_revoked(tmp_path):  # type: ignore[no-untyped-def]
    pems = [generate_material("ES256"), generate_material("ES256")]
    ring = Keyring("ES256", pems, tmp_path / "jwt-keys.json", keep_for=HOUR)
    second = ring.in_force()[1].kid
    with pytest.raises(RuntimeError, match="removing it from SVC_JWT_KEYS"):
        ring.revoke(second)
    assert ring.verification_key(second) is not None


def test_verification_looks_at_the_file_at_most_once_a_second(tmp_path, clock, monkeypatch):  # type: ignore[no-untyped-def]
    """verify is the hot path: a known kid costs no stat() within the second."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, clock=clock)
    kid = ring.signing_key().kid
    looked: list[Any] = []
    real_stat = os.stat

    def counting_stat(*args: Any, **kwargs: Any) -> Any:
        looked.append(args[0])
        return real_stat(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(os, "stat", counting_stat)
        for _ in range(100):
            assert ring.verification_key(kid, int(clock.now.timestamp())) is not None
        assert looked == []
        clock.advance(1)
        for _ in range(100):
            assert ring.verification_key(kid, int(clock.now.timestamp())) is not None
        assert looked == [path]
        clock.advance(-5)  # a clock set back looks again, then keeps quiet
        for _ in range(100):
            assert ring.verification_key(kid, int(clock.now.timestamp())) is not None
    assert looked == [path, path]


def _tokens(ring: Keyring) -> AccessTokens:
    return AccessTokens(ring, issuer="https://auth.example", audience="svc", ttl=HOUR, leeway=5)


def test_a_revoked_keys_tokens_are_refused_even_from_the_cache(tmp_path, clock):  # type: ignore[no-untyped-def]
    """AccessTokens caches the claims of a verified token; the cache keeps the kid and asks
    whether that key is still in force, so a revocation by another process reaches it."""
    path = tmp_path / "jwt-keys.json"
    tokens = _tokens(keyring(path, clock=clock))
    token = tokens.issue(user_id="u-1", session_id="s-1", plan="free", now=clock.now).token
    assert tokens.verify(token, clock.now).session_id == "s-1"  # now cached
    elsewhere = keyring(path, clock=clock)
    elsewhere.revoke(elsewhere.signing_key().kid)
    clock.advance(1)
    with pytest.raises(InvalidToken):
        tokens.verify(token, clock.now)


def test_a_retired_key_verifies_only_what_it_signed_before_retiring(tmp_path, clock):  # type: ignore[no-untyped-def]
    """With a leaked old key someone can sign anything: a token issued (by its own iat) more
    than the leeway after the key was retired is refused; tokens from before still verify."""
    path = tmp_path / "jwt-keys.json"
    ring = keyring(path, clock=clock)
    tokens = _tokens(ring)
    old = ring.signing_key()
    before = tokens.issue(user_id="u-1", session_id="s-1", plan="free", now=clock.now)
    retired_at = int(clock.now.timestamp())
    ring.rotate()
    clock.advance(60)
    now = clock.now
    assert tokens.verify(before.token, now).session_id == "s-1"
    for issued_at, accepted in ((retired_at + 5, True), (retired_at + 6, False)):
        minted = jwt.encode(
            {"iss": "https://auth.example", "aud": "svc", "sub": "u-1", "sid": "s-2",
             "jti": "minted", "iat": issued_at, "nbf": issued_at, "exp": issued_at + HOUR},
            old.private, algorithm="ES256", headers={"kid": old.kid, "typ": "at+jwt"})
        minted = low_s.normalised(minted)
        if accepted:
            assert tokens.verify(minted, now).session_id == "s-2"
        else:
            with pytest.raises(InvalidToken):
                tokens.verify(minted, now)


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


def test_cli_revocation_reaches_a_running_worker(app, client, user, login, clock, database_url):  # type: ignore[no-untyped-def]
    """`keys revoke` runs in its own process: a worker that verified (and cached) the leaked
    key's token refuses it within a second, and signs with the replacement."""
    token = login(user)["access_token"]
    assert client.get("/api/v2/auth/verify", headers=bearer(token)).status_code == 200
    leaked = jwt.get_unverified_header(token)["kid"]
    operator = _another_app(app.instance_path, SQLALCHEMY_DATABASE_URI=database_url,
                            CLOCK=clock)
    result = operator.test_cli_runner().invoke(args=["keys", "revoke", leaked])
    with operator.app_context():  # it wrote the audit event: close its connections
        db.session.remove()
        db.engine.dispose()
    assert result.exit_code == 0, result.output
    clock.advance(1)
    response = client.get("/api/v2/auth/verify", headers=bearer(token))
    assert response.status_code == 401, response.get_json()
    assert response.get_json()["code"] == "invalid_token"
    fresh = login(user)["access_token"]
    assert jwt.get_unverified_header(fresh)["kid"] != leaked
    assert client.get("/api/v2/auth/verify", headers=bearer(fresh)).status_code == 200
