"""Signing keys for access tokens: the keyring, its JWKS, rotation and revocation. Every key is
pinned to one algorithm, so a token can never choose how it is checked.
Why: docs/architecture/design-notes.md, "Keys"."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import logging
import math
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import Algorithm, ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from app.instance_files import create_once, replace_atomically

log = logging.getLogger("svc_auth.keys")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class SigningKey:
    kid: str
    alg: str
    private: Any  # a cryptography key object, or bytes for HS256
    public: Any
    created_at: int
    retired_at: int | None = None

    @classmethod
    def from_material(cls, alg: str, material: str, created_at: int,
                      retired_at: int | None = None) -> SigningKey:
        if alg == "HS256":
            secret = base64.urlsafe_b64decode(material + "=" * (-len(material) % 4))
            if len(secret) < 32:
                raise ValueError("an HS256 key needs at least 256 random bits")
            kid = _b64url(hashlib.sha256(b"svc-auth kid\0" + secret).digest()[:12])
            return cls(kid, alg, secret, secret, created_at, retired_at)
        private = serialization.load_pem_private_key(material.encode(), password=None)
        expected = {"ES256": ec.EllipticCurvePrivateKey, "RS256": rsa.RSAPrivateKey,
                    "EdDSA": ed25519.Ed25519PrivateKey}[alg]
        if not isinstance(private, expected):
            raise ValueError(f"the key is not an {alg} key")
        public = private.public_key()
        der = public.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
        return cls(_b64url(hashlib.sha256(der).digest()[:12]), alg, private, public,
                   created_at, retired_at)

    def retired(self, at: int) -> SigningKey:
        """This key, retired at `at` unless it was retired before."""
        return dataclasses.replace(self, retired_at=self.retired_at or at)

    def outlived(self, now: int, keep_for: int) -> bool:
        """True once a retired key has outlived every token it signed: it verifies nothing."""
        return self.retired_at is not None and self.retired_at + keep_for <= now

    def may_have_signed(self, issued_at: int, leeway: int) -> bool:
        """False for a token that says it was issued after this key was retired: only someone
        holding the retired (perhaps leaked) key could have made it."""
        return self.retired_at is None or issued_at <= self.retired_at + leeway

    def material(self) -> str:
        if self.alg == "HS256":
            return _b64url(self.private)
        pem: bytes = self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return pem.decode()

    def public_jwk(self) -> dict[str, Any] | None:
        """The key as published in the JWKS; None for a shared secret, which is never published."""
        algorithms: dict[str, type[Algorithm]] = {
            "ES256": ECAlgorithm, "RS256": RSAAlgorithm, "EdDSA": OKPAlgorithm}
        to_jwk = algorithms.get(self.alg)
        if to_jwk is None:
            return None
        jwk = to_jwk.to_jwk(self.public, as_dict=True)
        return {**jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}


def generate_material(alg: str) -> str:
    if alg == "HS256":
        return _b64url(secrets.token_bytes(32))
    private: Any = {
        "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
        "RS256": lambda: rsa.generate_private_key(public_exponent=65537, key_size=3072),
        "EdDSA": ed25519.Ed25519PrivateKey.generate,
    }[alg]()
    pem: bytes = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return pem.decode()


class Keyring:
    """The keys in force. File-backed keyrings notice a rotation or revocation made by another
    process: at once when signing or asked for an unknown kid, within `recheck_every` seconds
    otherwise (verify is the hot path, and a stat costs more than a cached verify)."""

    def __init__(self, alg: str, static_keys: list[str] | None, path: Path, keep_for: int, *,
                 clock: Callable[[], float] = time.time, recheck_every: int = 1) -> None:
        self.alg = alg
        self._path = None if static_keys else path
        self.keep_for = keep_for  # how long a retired key still verifies
        self._clock = clock
        self._recheck_every = recheck_every
        # verification_key looks at the file again once `now` leaves this window
        self._quiet: tuple[float, float] = (math.inf, -math.inf)
        self._file_version: tuple[int, int, int] | None = None
        self._keys: list[SigningKey] = []
        self._by_kid: dict[str, SigningKey] = {}
        if static_keys:
            now = int(clock())
            self._use([SigningKey.from_material(alg, m, now) for m in static_keys])
            self._quiet = (-math.inf, math.inf)  # no file to look at
        else:
            self._refresh(int(clock()))

    # Reading -----------------------------------------------------------------------------
    def signing_key(self) -> SigningKey:
        self._refresh(int(self._clock()))
        key = self._keys[0]
        if key.alg != self.alg:
            raise RuntimeError(
                f"The signing key in {self._path} is {key.alg} but SVC_JWT_ALG is {self.alg}:"
                " run `flask --app wsgi keys rotate` to add a key for the new algorithm."
            )
        return key

    def verification_key(self, kid: str, now: int | None = None) -> SigningKey | None:
        """The key in force with this kid, if any; `now` saves a clock call on the hot path.
        The file is looked at again if `recheck_every` seconds have passed (or the clock went
        back), or at once for an unknown kid: a key another process has just added."""
        at = int(self._clock()) if now is None else now
        quiet_from, quiet_until = self._quiet
        if not quiet_from <= at < quiet_until:
            self._refresh(at)
        key = self._by_kid.get(kid)
        if key is None and self._refresh(at):
            key = self._by_kid.get(kid)
        return key

    def in_force(self) -> list[SigningKey]:
        """Every key in force, the signing key first."""
        self._refresh(int(self._clock()))
        return list(self._keys)

    def jwks(self) -> dict[str, Any]:
        return {"keys": [jwk for key in self.in_force() if (jwk := key.public_jwk())]}

    @property
    def is_static(self) -> bool:
        """True when the keys come from SVC_JWT_KEYS, not from a keyring file."""
        return self._path is None

    # Changing ----------------------------------------------------------------------------
    def rotate(self) -> SigningKey:
        """Put a new signing key first and retire the others (they verify the tokens they signed
        before now, until those expire)."""
        if self._path is None:
            raise RuntimeError("Keys come from SVC_JWT_KEYS: rotate by putting a new key first.")
        now = int(self._clock())
        self._refresh(now)
        new = self._new_key(now)
        self._write([new, *(key.retired(now) for key in self._keys)])
        return new

    def revoke(self, kid: str) -> SigningKey | None:
        """Remove a key at once: no token it signed verifies any more, in any process. Revoking
        the signing key puts a new one in its place (returned), in the same write."""
        if self._path is None:
            raise RuntimeError("Keys come from SVC_JWT_KEYS: revoke a key by removing it from"
                               " SVC_JWT_KEYS and restarting the service.")
        now = int(self._clock())
        self._refresh(now)
        if kid not in self._by_kid:
            raise LookupError(f"No key {kid!r} is in force: `flask --app wsgi keys list` shows"
                              " the keys.")
        replacement = self._new_key(now) if self._keys[0].kid == kid else None
        rest = [key for key in self._keys if key.kid != kid]  # already retired if replaced
        self._write([replacement, *rest] if replacement else rest)
        log.warning("signing key %s revoked%s", kid,
                    f"; new signing key {replacement.kid}" if replacement else "")
        return replacement

    # The keyring file --------------------------------------------------------------------
    def _refresh(self, now: int) -> bool:
        """Reread the file if it changed and drop retired keys that have outlived their tokens.
        True if the file changed."""
        if self._path is None:
            return False
        # Quiet for the period, and a period behind (a request that began just before another
        # thread looked); a clock set back further looks again.
        self._quiet = (now - self._recheck_every, now + self._recheck_every)
        stored = self._read_if_changed()
        keys = self._keys if stored is None else stored
        in_force = [key for key in keys if not key.outlived(now, self.keep_for)]
        if stored is not None or len(in_force) != len(self._keys):
            self._use(in_force)
        return stored is not None

    def _read_if_changed(self) -> list[SigningKey] | None:
        """The keys stored in the file, or None if it is the version read last time."""
        assert self._path is not None
        try:
            stat = os.stat(self._path)
        except FileNotFoundError:
            create_once(self._path,
                        lambda: self._serialize([self._new_key(int(self._clock()))]))
            stat = os.stat(self._path)
        # A rotation replaces the file (a new inode), so this notices it even where file
        # timestamps are too coarse to tell two writes apart.
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if version == self._file_version:
            return None
        stored = json.loads(self._path.read_bytes())["keys"]
        self._file_version = version
        return [SigningKey.from_material(k["alg"], k["material"], k["created_at"],
                                         k.get("retired_at")) for k in stored]

    def _use(self, keys: list[SigningKey]) -> None:
        self._keys = keys
        self._by_kid = {key.kid: key for key in keys}

    def _write(self, keys: list[SigningKey]) -> None:
        assert self._path is not None
        replace_atomically(self._path, self._serialize(keys))
        self._refresh(int(self._clock()))

    def _new_key(self, now: int) -> SigningKey:
        return SigningKey.from_material(self.alg, generate_material(self.alg), now)

    @staticmethod
    def _serialize(keys: list[SigningKey]) -> bytes:
        return json.dumps({"keys": [
            {"kid": k.kid, "alg": k.alg, "material": k.material(),
             "created_at": k.created_at, "retired_at": k.retired_at}
            for k in keys
        ]}, indent=2).encode()
