"""A passkey in place of the password: the proof an account without a password gives before a
new address, leaving or its first password (lifecycle/proof.py). A ceremony of its own, bound to
the account, with the person verified (PIN, fingerprint): a stolen session alone cannot answer.
Why: docs/decisions.md, "Passkey-first accounts"."""

from __future__ import annotations

import webauthn
from webauthn.helpers.structs import UserVerificationRequirement

from app.db.transactions import kept, writes
from app.domain.factors import passkeys
from app.domain.factors.errors import InvalidPasskey
from app.models import PasskeyChallenge, User


@writes
def options(user: User) -> str:
    """The options for `navigator.credentials.get()`: one of the account's own passkeys."""
    allowed = passkeys._descriptors(user)
    if not allowed:
        raise InvalidPasskey("This account has no passkey.")
    return webauthn.options_to_json(webauthn.generate_authentication_options(
        rp_id=passkeys._rp_id(), allow_credentials=allowed,
        timeout=passkeys.CHALLENGE_TTL * 1000,
        challenge=passkeys._new_challenge(PasskeyChallenge.OWNER_PROOF, user_id=user.id),
        user_verification=UserVerificationRequirement.REQUIRED))


def prove(user: User, untrusted_json: str) -> None:
    """In the caller's unit of work: the answer to `options` by one of the account's passkeys
    that signs in alone (one stopped by a reset proves only the second step). InvalidPasskey
    (kept: the challenge is spent) for anything else."""
    answer = passkeys._claimed(untrusted_json, PasskeyChallenge.OWNER_PROOF)
    if answer.ceremony.user_id != user.id:
        raise kept(InvalidPasskey())
    passkey = passkeys._verified(answer, require_user_verification=True, owner=user.id)
    if not passkey.signs_in_alone:
        raise kept(InvalidPasskey(passkeys.SECOND_STEP_ONLY))
