"""A software WebAuthn authenticator (and the browser around it) for tests: it answers the options
py_webauthn's `options_to_json` gives with the JSON `navigator.credentials.create()` / `.get()`
serialise to (WebAuthn Level 3 `toJSON()`, base64url without padding), so server tests can
register and use passkeys without a browser or a hardware key.

Only what a server has to check is modelled: ES256 keys, attestation "none", the UP/UV/BE/BS/AT
flags and the sign counter. `credentials` is public so that a test can tamper with what the
authenticator holds (another rp_id, a counter reset as a cloned key would have).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.encoding import b64url

ES256 = -7
FLAG_UP, FLAG_UV, FLAG_BE, FLAG_BS, FLAG_AT = 0x01, 0x04, 0x08, 0x10, 0x40


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Credential:
    """One passkey the authenticator holds; mutable, so a test can play a clone or another site."""

    id: bytes
    private_key: ec.EllipticCurvePrivateKey
    rp_id: str
    user_handle: bytes
    sign_count: int = 0

    def cose_public_key(self) -> bytes:
        """The public key as COSE_Key in CBOR (EC2, ES256, P-256), as attested credential data
        carries it."""
        numbers = self.private_key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: ES256, -1: 1,
                            -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})


class SoftAuthenticator:
    """A platform authenticator holding ES256 passkeys, all of them discoverable."""

    def __init__(self, *, user_verification: bool = True, backup_eligible: bool = False,
                 sign_count_step: int = 1) -> None:
        """`sign_count_step=0` keeps every counter at 0, as synced passkeys do;
        `backup_eligible` sets BE and BS together, as a synced passkey does."""
        self.user_verification = user_verification
        self.backup_eligible = backup_eligible
        self.sign_count_step = sign_count_step
        self.credentials: list[Credential] = []

    def register(self, options: dict[str, Any] | str, origin: str, *,
                 rp_id: str | None = None) -> dict[str, Any]:
        """Answer PublicKeyCredentialCreationOptions (the JSON py_webauthn's options_to_json
        gives, as dict or str) as a browser at `origin` would: attestation "none", ES256 COSE key,
        flags UP (and UV if user_verification, BE/BS if backup_eligible), AT; returns the
        RegistrationCredential JSON dict. Uses options["rp"]["id"] (or the origin's host when
        absent; `rp_id` overrides both, to make a passkey for another site) and
        options["user"]["id"]."""
        options = _loaded(options)
        algs = [param.get("alg") for param in options.get("pubKeyCredParams", [])]
        if algs and ES256 not in algs:
            raise ValueError(f"the RP accepts none of our algorithms (ES256 = -7): {algs}")
        excluded = {unb64url(c["id"]) for c in options.get("excludeCredentials") or []}
        if any(held.id in excluded for held in self.credentials):
            # A browser answers InvalidStateError: this authenticator is already registered.
            raise ValueError("already holds a credential the options exclude")
        credential = Credential(
            id=secrets.token_bytes(16),
            private_key=ec.generate_private_key(ec.SECP256R1()),
            rp_id=rp_id or options.get("rp", {}).get("id") or _host(origin),
            user_handle=unb64url(options["user"]["id"]),
        )
        self.credentials.append(credential)
        attested = bytes(16) + struct.pack(">H", len(credential.id)) + credential.id
        auth_data = self._authenticator_data(credential.rp_id, FLAG_AT, credential.sign_count)
        attestation_object = cbor2.dumps(
            {"fmt": "none", "attStmt": {}, "authData": auth_data + attested
             + credential.cose_public_key()})
        return {
            "id": b64url(credential.id),
            "rawId": b64url(credential.id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(_client_data("webauthn.create", options, origin)),
                "attestationObject": b64url(attestation_object),
                "transports": ["internal"],
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }

    def assert_(self, options: dict[str, Any] | str, origin: str, *,
                credential_id: bytes | None = None, rp_id: str | None = None) -> dict[str, Any]:
        """Answer PublicKeyCredentialRequestOptions: with allowCredentials, one of those this
        authenticator holds (the newest); without (or empty, as options_to_json writes it), a
        discoverable credential for options["rpId"] (the newest). `credential_id` picks a held
        credential regardless of the list. userHandle set. The counter advances by
        sign_count_step (0 keeps it at 0, as synced passkeys do). The rpIdHash is that of the
        credential's rp_id, or of `rp_id` when given (an assertion for another site). Signs
        authenticatorData || sha256(clientDataJSON)."""
        options = _loaded(options)
        credential = self._choose(options, origin, credential_id, rp_id)
        credential.sign_count += self.sign_count_step
        auth_data = self._authenticator_data(rp_id or credential.rp_id, 0, credential.sign_count)
        client_data = _client_data("webauthn.get", options, origin)
        signature = credential.private_key.sign(
            auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(credential.id),
            "rawId": b64url(credential.id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client_data),
                "authenticatorData": b64url(auth_data),
                "signature": b64url(signature),
                "userHandle": b64url(credential.user_handle),
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        }

    def _choose(self, options: dict[str, Any], origin: str, credential_id: bytes | None,
                rp_id: str | None) -> Credential:
        """The credential a browser would use; LookupError (the browser's NotAllowedError)
        when this authenticator holds none that fits."""
        if credential_id is not None:
            fits = [held for held in self.credentials if held.id == credential_id]
        elif options.get("allowCredentials"):
            allowed = {unb64url(c["id"]) for c in options["allowCredentials"]}
            fits = [held for held in self.credentials if held.id in allowed]
        else:
            wanted = rp_id or options.get("rpId") or _host(origin)
            fits = [held for held in self.credentials if held.rp_id == wanted]
        if not fits:
            raise LookupError("the authenticator holds no credential for these options")
        return fits[-1]

    def _authenticator_data(self, rp_id: str, flags: int, sign_count: int) -> bytes:
        """sha256(rp_id) || flags || counter (big-endian), without attested credential data."""
        flags |= FLAG_UP
        if self.user_verification:
            flags |= FLAG_UV
        if self.backup_eligible:
            flags |= FLAG_BE | FLAG_BS
        return (hashlib.sha256(rp_id.encode()).digest() + bytes([flags])
                + struct.pack(">I", sign_count))


def _loaded(options: dict[str, Any] | str) -> dict[str, Any]:
    return json.loads(options) if isinstance(options, str) else options


def _host(origin: str) -> str:
    host = urlsplit(origin).hostname
    if not host:
        raise ValueError(f"not an origin: {origin!r}")
    return host


def _client_data(kind: str, options: dict[str, Any], origin: str) -> bytes:
    """clientDataJSON as a browser serialises it: compact, members in the spec's order."""
    data = {"type": kind, "challenge": options["challenge"], "origin": origin,
            "crossOrigin": False}
    return json.dumps(data, separators=(",", ":")).encode()
