"""Who a provider sign-in becomes: found by (provider, subject), linked only on verified emails."""

from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from app.domain.accounts import identities
from app.domain.accounts.errors import (
    AccountExists,
    ProviderEmailNotVerified,
    ProviderSignInRefused,
)
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.extensions import db
from app.models import Identity, User
from tests.support.accounts import OWNED
from tests.support.http import bearer

pytestmark = pytest.mark.app_settings("oauth")

CLIENT = ClientInfo()
# An address proved before the password was last set (say, by a reset): links automatically.


def profile(subject="g-1", email="ada@example.com", verified=True, provider="google",
            name="Ada L."):
    return Profile(provider, subject, email, verified, name)


def sign_in(app, found_profile):
    with app.app_context():
        user = identities.account_for(found_profile, CLIENT)
        db.session.commit()
        return user.id


def test_a_new_person_gets_a_verified_account_without_a_password(app):
    user_id = sign_in(app, profile(email="new@example.com", name="New Person"))
    with app.app_context():
        user = db.session.get(User, user_id)
        assert (user.email, user.full_name, user.password_hash, user.email_verified) == (
            "new@example.com", "New Person", None, True)


def test_the_same_identity_signs_in_to_the_same_account_even_after_an_email_change(app):
    first = sign_in(app, profile(email="old@example.com"))
    assert sign_in(app, profile(email="changed@example.com")) == first


def test_the_same_email_on_two_providers_is_two_identities_of_one_account(app):
    google = sign_in(app, profile(provider="google", subject="g-1", email="x@example.com"))
    github = sign_in(app, profile(provider="github", subject="4242", email="x@example.com"))
    assert google == github
    with app.app_context():
        assert identities.providers_of(google) == ["github", "google"]


def test_a_verified_match_links_to_an_account_whose_password_came_after_the_proof(app,
                                                                                 make_user):
    local = make_user("ada@example.com", **OWNED)
    assert sign_in(app, profile()) == local.id


def test_an_unverified_local_account_is_never_merged(app, make_user):
    """An attacker pre-registers the victim's email with a password; the victim's Google
    sign-in must not hand the attacker's account to the victim, nor the victim's to them."""
    make_user("ada@example.com", email_verified=False)
    with app.app_context(), pytest.raises(AccountExists):
        identities.account_for(profile(), CLIENT)
    with app.app_context():
        assert db.session.scalars(select(Identity)).all() == []


def test_an_unverified_provider_email_gets_no_access_to_a_matching_account(app, make_user):
    make_user("ada@example.com", email_verified=True)
    with app.app_context(), pytest.raises(ProviderEmailNotVerified):
        identities.account_for(profile(verified=False), CLIENT)


def test_an_unverified_provider_email_creates_no_account(app):
    with app.app_context(), pytest.raises(ProviderEmailNotVerified):
        identities.account_for(profile(email="new@example.com", verified=False), CLIENT)
    with app.app_context(), pytest.raises(ProviderEmailNotVerified):
        identities.account_for(profile(email=None), CLIENT)


def test_a_disabled_account_is_refused(app, make_user):
    make_user("ada@example.com", email_verified=True, disabled_at=datetime.now(UTC))
    with app.app_context(), pytest.raises(ProviderSignInRefused):
        identities.account_for(profile(), CLIENT)


def test_verify_lists_linked_providers_and_unlink_keeps_a_way_in(app, client, make_user, login):
    account = make_user("ada@example.com", **OWNED)
    sign_in(app, profile(provider="google"))
    auth = bearer(login(account)["access_token"])
    verify = client.get("/api/v2/auth/verify", headers=auth)
    assert verify.get_json()["user"]["providers"] == ["google"]
    response = client.delete("/api/v2/auth/providers/google", headers=auth)
    assert response.status_code == 204  # the password remains
    assert client.get("/api/v2/auth/verify", headers=auth).get_json()["user"]["providers"] == []
    assert client.delete("/api/v2/auth/providers/google", headers=auth).status_code == 404


def test_the_last_way_to_sign_in_cannot_be_unlinked(app, client):
    user_id = sign_in(app, profile(email="only-google@example.com"))
    with app.app_context():
        user = db.session.get(User, user_id)
        from app.domain.sessions import sessions
        tokens = sessions.issue_tokens(user, "google", CLIENT)
    response = client.delete("/api/v2/auth/providers/google",
                             headers=bearer(tokens.access_token))
    assert response.status_code == 409
    assert response.get_json()["code"] == "last_sign_in_method"
