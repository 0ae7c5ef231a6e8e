"""Signing keys for access tokens: the keyring, its JWKS, and rotation.

Keys come from SVC_JWT_KEYS (production: a JSON list of private keys, the first one signs) or,
in the embedded default, from a keyring file created once in the instance folder. Rotation adds
a signing key and keeps the old ones for verification until the tokens they signed have expired.
Every key is pinned to one algorithm, so a token can never choose how it is checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from app.instance_files import create_once, replace_atomically


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

    def material(self) -> str:
        if self.alg == "HS256":
            return _b64url(self.private)
        return self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    def public_jwk(self) -> dict[str, Any] | None:
        """The key as published in the JWKS; None for a shared secret, which is never published."""
        to_jwk = {"ES256": ECAlgorithm, "RS256": RSAAlgorithm, "EdDSA": OKPAlgorithm}.get(self.alg)
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
    return private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


class Keyring:
    """The keys in force. File-backed keyrings notice a rotation made by another process."""

    def __init__(self, alg: str, static_keys: list[str] | None, path: Path, keep_for: int) -> None:
        self.alg = alg
        self._path = None if static_keys else path
        self._keep_for = keep_for  # how long a retired key still verifies
        self._file_version: tuple[int, int, int] | None = None
        self._keys: list[SigningKey] = []
        if static_keys:
            now = int(time.time())
            self._keys = [SigningKey.from_material(alg, m, now) for m in static_keys]
        else:
            self._reload_if_changed()

    # Reading -----------------------------------------------------------------------------
    def signing_key(self) -> SigningKey:
        self._reload_if_changed()
        key = self._keys[0]
        if key.alg != self.alg:
            raise RuntimeError(
                f"The signing key in {self._path} is {key.alg} but SVC_JWT_ALG is {self.alg}:"
                " run `flask --app wsgi keys rotate` to add a key for the new algorithm."
            )
        return key

    def verification_key(self, kid: str) -> SigningKey | None:
        key = self._find(kid)
        if key is None and self._reload_if_changed():
            key = self._find(kid)
        return key

    def jwks(self) -> dict[str, Any]:
        self._reload_if_changed()
        return {"keys": [jwk for key in self._keys if (jwk := key.public_jwk())]}

    def _find(self, kid: str) -> SigningKey | None:
        return next((key for key in self._keys if key.kid == kid), None)

    # The keyring file --------------------------------------------------------------------
    def _reload_if_changed(self) -> bool:
        if self._path is None:
            return False
        if not self._path.exists():
            create_once(self._path, lambda: self._serialize([self._new_key(int(time.time()))]))
        # A rotation replaces the file (a new inode), so this notices it even where file
        # timestamps are too coarse to tell two writes apart.
        stat = os.stat(self._path)
        version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if version == self._file_version:
            return False
        stored = json.loads(self._path.read_bytes())["keys"]
        self._keys = [SigningKey.from_material(k["alg"], k["material"], k["created_at"],
                                               k.get("retired_at")) for k in stored]
        self._file_version = version
        return True

    def rotate(self) -> SigningKey:
        """Put a new signing key first; keep retired keys until their tokens have expired."""
        if self._path is None:
            raise RuntimeError("Keys come from SVC_JWT_KEYS: rotate by putting a new key first.")
        now = int(time.time())
        self._reload_if_changed()
        current = self._keys  # of any algorithm: they verify until their tokens expire
        kept = [
            SigningKey(k.kid, k.alg, k.private, k.public, k.created_at, k.retired_at or now)
            for k in current
            if k.retired_at is None or k.retired_at + self._keep_for > now
        ]
        new = self._new_key(now)
        replace_atomically(self._path, self._serialize([new, *kept]))
        self._reload_if_changed()
        return new

    def _new_key(self, now: int) -> SigningKey:
        return SigningKey.from_material(self.alg, generate_material(self.alg), now)

    @staticmethod
    def _serialize(keys: list[SigningKey]) -> bytes:
        return json.dumps({"keys": [
            {"kid": k.kid, "alg": k.alg, "material": k.material(),
             "created_at": k.created_at, "retired_at": k.retired_at}
            for k in keys
        ]}, indent=2).encode()
