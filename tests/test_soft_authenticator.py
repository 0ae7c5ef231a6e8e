"""The software authenticator of tests/support/soft_authenticator.py, checked against py_webauthn
itself: what it answers verifies where a browser's answer would, and is refused where a server
must refuse (another origin, another site's passkey, a counter that went backwards), so server
tests built on it prove something about the server and not about the helper.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import decode_credential_public_key, parse_authentication_credential_json
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AttestationFormat,
    CredentialDeviceType,
    PublicKeyCredentialDescriptor,
)

from tests.support.encoding import b64url
from tests.support.soft_authenticator import SoftAuthenticator

RP_ID = "example.com"
ORIGIN = "https://example.com"
EVIL_RP_ID = "evil.example"
EVIL_ORIGIN = "https://evil.example"


def creation_options(user_id: bytes = b"user-1", **extra: Any):
    return generate_registration_options(rp_id=RP_ID, rp_name="Example", user_name="ada",
                                         user_id=user_id, **extra)


def registered(authenticator: SoftAuthenticator, user_id: bytes = b"user-1"):
    """Register a passkey for `user_id` at example.com: what the server stores of it."""
    options = creation_options(user_id)
    answer = authenticator.register(options_to_json(options), ORIGIN)
    return verify_registration_response(credential=answer, expected_challenge=options.challenge,
                                        expected_rp_id=RP_ID, expected_origin=ORIGIN)


def request_options(*credential_ids: bytes):
    allow = [PublicKeyCredentialDescriptor(id=cid) for cid in credential_ids]
    return generate_authentication_options(rp_id=RP_ID, allow_credentials=allow)


def verify_assertion(answer: dict[str, Any], options, stored, current_count: int,
                     origin: str = ORIGIN, **extra: Any):
    return verify_authentication_response(
        credential=answer, expected_challenge=options.challenge, expected_rp_id=RP_ID,
        expected_origin=origin, credential_public_key=stored.credential_public_key,
        credential_current_sign_count=current_count, **extra)


@pytest.mark.parametrize("backup_eligible, device_type", [
    (False, CredentialDeviceType.SINGLE_DEVICE),
    (True, CredentialDeviceType.MULTI_DEVICE),
])
def test_a_registration_verifies(backup_eligible: bool, device_type: CredentialDeviceType) -> None:
    authenticator = SoftAuthenticator(backup_eligible=backup_eligible)
    options = creation_options()
    answer = authenticator.register(options_to_json(options), ORIGIN)

    # As a str too: the body a browser would post.
    verified = verify_registration_response(
        credential=json.dumps(answer), expected_challenge=options.challenge,
        expected_rp_id=RP_ID, expected_origin=ORIGIN, require_user_verification=True)

    [held] = authenticator.credentials
    assert verified.credential_id == held.id and len(held.id) == 16
    assert answer["id"] == answer["rawId"] == b64url(held.id)
    key = decode_credential_public_key(verified.credential_public_key)
    numbers = held.private_key.public_key().public_numbers()
    assert (key.x, key.y) == (numbers.x.to_bytes(32, "big"), numbers.y.to_bytes(32, "big"))
    assert verified.sign_count == 0
    assert verified.fmt == AttestationFormat.NONE
    assert verified.aaguid == "00000000-0000-0000-0000-000000000000"
    assert verified.user_verified is True
    assert verified.credential_device_type == device_type
    assert verified.credential_backed_up is backup_eligible
    assert (held.rp_id, held.user_handle) == (RP_ID, b"user-1")


def test_without_rp_id_in_the_options_the_origin_host_is_the_rp() -> None:
    authenticator = SoftAuthenticator()
    options = creation_options()
    body = json.loads(options_to_json(options))
    del body["rp"]["id"]

    answer = authenticator.register(body, ORIGIN)

    verify_registration_response(credential=answer, expected_challenge=options.challenge,
                                 expected_rp_id=RP_ID, expected_origin=ORIGIN)
    assert authenticator.credentials[0].rp_id == RP_ID


def test_excluded_credentials_are_not_registered_twice() -> None:
    authenticator = SoftAuthenticator()
    stored = registered(authenticator)
    again = creation_options(
        exclude_credentials=[PublicKeyCredentialDescriptor(id=stored.credential_id)])

    with pytest.raises(ValueError, match="exclude"):
        authenticator.register(options_to_json(again), ORIGIN)
    assert len(authenticator.credentials) == 1


def test_an_assertion_verifies_and_the_sign_count_advances() -> None:
    authenticator = SoftAuthenticator()
    stored = registered(authenticator)
    count = stored.sign_count
    for expected in (1, 2):
        options = request_options(stored.credential_id)
        # As a dict this time, as a page's script would have parsed it.
        answer = authenticator.assert_(json.loads(options_to_json(options)), ORIGIN)

        verified = verify_assertion(answer, options, stored, count, require_user_verification=True)

        assert verified.credential_id == stored.credential_id
        assert verified.new_sign_count == expected
        assert verified.user_verified is True
        assert verified.credential_device_type == CredentialDeviceType.SINGLE_DEVICE
        count = verified.new_sign_count


def test_allow_credentials_picks_the_listed_credential() -> None:
    authenticator = SoftAuthenticator()
    first, second = registered(authenticator), registered(authenticator)
    options = request_options(first.credential_id)

    answer = authenticator.assert_(options_to_json(options), ORIGIN)

    assert answer["rawId"] == b64url(first.credential_id)
    verify_assertion(answer, options, first, first.sign_count)
    with pytest.raises(InvalidAuthenticationResponse, match="signature"):
        verify_assertion(answer, options, second, second.sign_count)
    with pytest.raises(LookupError):
        authenticator.assert_(options_to_json(request_options(b"not held")), ORIGIN)


def test_without_user_verification_the_server_is_told_so() -> None:
    authenticator = SoftAuthenticator(user_verification=False)
    options = creation_options()
    answer = authenticator.register(options_to_json(options), ORIGIN)
    check = {"credential": answer, "expected_challenge": options.challenge,
             "expected_rp_id": RP_ID, "expected_origin": ORIGIN}

    stored = verify_registration_response(**check)
    assert stored.user_verified is False
    with pytest.raises(InvalidRegistrationResponse, match="User verification is required"):
        verify_registration_response(**check, require_user_verification=True)

    request = request_options(stored.credential_id)
    assertion = authenticator.assert_(options_to_json(request), ORIGIN)
    assert verify_assertion(assertion, request, stored, 0).user_verified is False
    with pytest.raises(InvalidAuthenticationResponse, match="User verification is required"):
        verify_assertion(assertion, request, stored, 0, require_user_verification=True)


def test_a_wrong_origin_is_refused() -> None:
    authenticator = SoftAuthenticator()
    options = creation_options()
    answer = authenticator.register(options_to_json(options), EVIL_ORIGIN)
    check = {"credential": answer, "expected_challenge": options.challenge,
             "expected_rp_id": RP_ID}

    with pytest.raises(InvalidRegistrationResponse, match="origin"):
        verify_registration_response(**check, expected_origin=ORIGIN)
    # The origin is all that is wrong: the same answer verifies where it was made.
    stored = verify_registration_response(**check, expected_origin=EVIL_ORIGIN)

    request = request_options(stored.credential_id)
    assertion = authenticator.assert_(options_to_json(request), EVIL_ORIGIN)
    with pytest.raises(InvalidAuthenticationResponse, match="origin"):
        verify_assertion(assertion, request, stored, 0)
    verify_assertion(assertion, request, stored, 0, origin=EVIL_ORIGIN)


def test_a_passkey_for_another_rp_id_is_refused() -> None:
    authenticator = SoftAuthenticator()
    options = creation_options()
    answer = authenticator.register(options_to_json(options), ORIGIN, rp_id=EVIL_RP_ID)
    check = {"credential": answer, "expected_challenge": options.challenge,
             "expected_origin": ORIGIN}

    with pytest.raises(InvalidRegistrationResponse, match="Unexpected RP ID hash"):
        verify_registration_response(**check, expected_rp_id=RP_ID)
    verify_registration_response(**check, expected_rp_id=EVIL_RP_ID)
    assert authenticator.credentials[0].rp_id == EVIL_RP_ID


def test_an_assertion_for_another_rp_id_is_refused() -> None:
    authenticator = SoftAuthenticator()
    stored = registered(authenticator)

    request = request_options(stored.credential_id)
    assertion = authenticator.assert_(options_to_json(request), ORIGIN, rp_id=EVIL_RP_ID)
    with pytest.raises(InvalidAuthenticationResponse, match="Unexpected RP ID hash"):
        verify_assertion(assertion, request, stored, 0)

    # The same by tampering with what the authenticator holds.
    authenticator.credentials[0].rp_id = EVIL_RP_ID
    request = request_options(stored.credential_id)
    assertion = authenticator.assert_(options_to_json(request), ORIGIN)
    with pytest.raises(InvalidAuthenticationResponse, match="Unexpected RP ID hash"):
        verify_assertion(assertion, request, stored, 0)

    authenticator.credentials[0].rp_id = RP_ID
    request = request_options(stored.credential_id)
    verify_assertion(authenticator.assert_(options_to_json(request), ORIGIN), request, stored, 0)


def test_a_counter_not_greater_than_the_stored_one_is_refused() -> None:
    authenticator = SoftAuthenticator()
    stored = registered(authenticator)
    request = request_options(stored.credential_id)
    assertion = authenticator.assert_(options_to_json(request), ORIGIN)
    count = verify_assertion(assertion, request, stored, 0).new_sign_count
    assert count == 1

    # Replayed: the same answer once its count has been stored.
    with pytest.raises(InvalidAuthenticationResponse, match="not greater than current count"):
        verify_assertion(assertion, request, stored, count)

    # Cloned: a copy of the key whose counter is behind the original's.
    authenticator.credentials[0].sign_count = 0
    request = request_options(stored.credential_id)
    clone = authenticator.assert_(options_to_json(request), ORIGIN)
    with pytest.raises(InvalidAuthenticationResponse, match="not greater than current count"):
        verify_assertion(clone, request, stored, count)


def test_a_synced_passkey_keeps_its_counter_at_zero() -> None:
    authenticator = SoftAuthenticator(sign_count_step=0, backup_eligible=True)
    stored = registered(authenticator)
    for _ in range(2):
        request = request_options(stored.credential_id)
        answer = authenticator.assert_(options_to_json(request), ORIGIN)
        verified = verify_assertion(answer, request, stored, 0)
        assert verified.new_sign_count == 0
        assert verified.credential_backed_up is True
    assert authenticator.credentials[0].sign_count == 0


def test_a_discoverable_assertion_carries_the_user_handle_of_registration() -> None:
    authenticator = SoftAuthenticator()
    registered(authenticator, b"user-1")
    newest = registered(authenticator, b"user-2")
    # Newer still, but for another site: not offered to example.com.
    other = creation_options(b"user-3")
    authenticator.register(options_to_json(other), EVIL_ORIGIN, rp_id=EVIL_RP_ID)

    request = generate_authentication_options(rp_id=RP_ID)
    assert json.loads(options_to_json(request))["allowCredentials"] == []
    answer = authenticator.assert_(options_to_json(request), ORIGIN)

    assert parse_authentication_credential_json(answer).response.user_handle == b"user-2"
    assert answer["rawId"] == b64url(newest.credential_id)
    verify_assertion(answer, request, newest, newest.sign_count)
