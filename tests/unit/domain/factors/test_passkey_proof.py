"""The passkey as the owner's proof for an account without a password (factors/passkey_proof.py,
lifecycle/proof.py): a new address, leaving and the export; a stranger's passkey or a replayed
answer turned away."""

from __future__ import annotations

import pytest

from tests.support.accounts import OWNED
from tests.support.pages import submit
from tests.support.passkey_first import (
    GRACE,
    LATER,
    ORIGIN,
    account,
    flashed,
    proof_answer,
)
from tests.support.passkeys import add_passkey
from tests.support.soft_authenticator import SoftAuthenticator


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


# The owner's proof: a new address, leaving, the export -----------------------------------------

def test_a_new_address_needs_the_passkey_not_a_recent_sign_in(app, grace, authenticator,
                                                              mailbox):
    refused = submit(grace, "/account/email", {"new_email": "grace@new.example"},
                     token_from="/account")
    assert refused.status_code == 302 and not mailbox.to("grace@new.example")
    asked = submit(grace, "/account/email", {"new_email": "grace@new.example",
                                             "credential": proof_answer(grace, authenticator)},
                   token_from="/account")
    assert asked.status_code == 302
    assert "A link is on its way" in flashed(grace)
    assert mailbox.last_link("grace@new.example", "/email-change")


def test_a_stolen_session_with_the_thiefs_own_passkey_moves_nothing(app, grace, make_user,
                                                                    mailbox):
    """The thief holds Grace's session and a passkey of their own account: its answer to
    Grace's options is refused."""
    thief_key = SoftAuthenticator()
    thief = app.test_client()
    mallory = make_user("mallory@example.com", **OWNED)
    submit(thief, "/login", {"email": mallory.email, "password": mallory.password})
    assert add_passkey(thief, thief_key, ORIGIN).status_code == 200
    [held] = thief_key.credentials
    answer = proof_answer(grace, thief_key, credential_id=held.id)
    refused = submit(grace, "/account/email", {"new_email": "mallory@evil.example",
                                               "credential": answer}, token_from="/account")
    assert refused.status_code == 302 and not mailbox.to("mallory@evil.example")
    assert account(app).email == GRACE


def test_a_passkey_answer_is_used_once(app, grace, authenticator, mailbox):
    answer = proof_answer(grace, authenticator)
    for to in ("one@new.example", "two@new.example"):
        submit(grace, "/account/email", {"new_email": to, "credential": answer},
               token_from="/account")
    assert mailbox.to("one@new.example") and not mailbox.to("two@new.example")


def test_leaving_takes_the_passkey_or_a_recent_sign_in(app, grace, authenticator, clock):
    clock.advance(LATER)
    refused = submit(grace, "/account/delete", {"confirm_word": "delete"}, token_from="/account")
    assert refused.status_code == 302 and account(app).deletion_scheduled_at is None
    left = submit(grace, "/account/delete", {"confirm_word": "delete",
                                             "credential": proof_answer(grace, authenticator)},
                  token_from="/account")
    assert left.status_code == 200 and account(app).deletion_scheduled_at is not None


def test_the_export_is_the_signed_in_owners(app, grace):
    exported = grace.get("/account/export")
    assert exported.status_code == 200
    assert exported.get_json()["profile"]["email"] == GRACE


def test_the_account_page_offers_the_passkey_as_the_proof(grace, clock):
    clock.advance(LATER)
    page = flashed(grace)
    assert "/account/passkeys/proof/options" in page
    assert "Send the link, confirming with a passkey" in page


