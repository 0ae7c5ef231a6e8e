"""Passkeys on the hosted pages through the test client, answered by a software authenticator
(tests/support/soft_authenticator.py) and checked by py_webauthn on the server: adding them,
signing in with one alone, one as the second step, removing them, and the attacks on each.
(Real Chromium and its virtual authenticator: tests/system/browser/test_passkeys.py.)"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from sqlalchemy import select, update

from app.domain.factors import passkeys, second_factors
from app.extensions import db
from app.models import AuditEvent, AuthSession, Passkey, PasskeyChallenge, RecoveryCode, User
from app.web.headers import CONTENT_SECURITY_POLICY
from tests.support import races
from tests.support.accounts import OWNED
from tests.support.encoding import b64url
from tests.support.pages import csrf_token, sign_in_with_password, submit
from tests.support.passkeys import add_passkey as add_passkey_at
from tests.support.passkeys import ceremony_options as options
from tests.support.settings import change_settings
from tests.support.sites import SYMBOLS
from tests.support.soft_authenticator import SoftAuthenticator

pytestmark = pytest.mark.app_settings("pages")

ORIGIN = "http://localhost:5000"


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


@pytest.fixture
def user(make_user):
    """The account of these tests, its address proved: adding a factor needs that."""
    return make_user(**OWNED)


@pytest.fixture
def authenticator():
    return SoftAuthenticator()


def add_passkey(client, authenticator, name="Laptop"):
    return add_passkey_at(client, authenticator, ORIGIN, name)


def passkey_sign_in(client, authenticator, query="", origin=ORIGIN, **tamper):
    asked = options(client, "/login/passkey/options", "/login")
    assert asked.status_code == 200
    answer = authenticator.assert_(asked.get_json(), origin, **tamper)
    return submit(client, "/login/passkey" + query, {"credential": json.dumps(answer)},
                  token_from="/login")


@pytest.fixture
def with_passkey(app, user, authenticator):
    """`user` with one passkey, added from another browser, which then signs out."""
    browser = app.test_client()
    assert sign_in_with_password(browser, user).status_code == 302
    added = add_passkey(browser, authenticator)
    assert added.status_code == 200 and "Your recovery codes" in added.get_data(as_text=True)
    return user


def token_claims(client, landing):
    """The access token a client site gets for the code it was handed."""
    params = parse_qs(urlsplit(landing.headers["Location"]).query)
    tokens = client.post("/api/v2/auth/exchange-code",
                         json={"code": params["code"][0], "provider": params["provider"][0]})
    assert tokens.status_code == 200, tokens.get_json()
    return jwt.decode(tokens.get_json()["access_token"], options={"verify_signature": False})


def passkeys_of(app, user):
    with app.app_context():
        return db.session.scalars(select(Passkey).where(Passkey.user_id == user.id)).all()


# Adding ----------------------------------------------------------------------------------------

def test_a_first_passkey_is_added_with_recovery_codes_listed_and_mailed(
        app, client, user, authenticator, mailbox):
    other_browser = app.test_client()
    assert sign_in_with_password(other_browser, user).status_code == 302
    assert sign_in_with_password(client, user).status_code == 302
    added = add_passkey(client, authenticator, "Work laptop")
    page = added.get_data(as_text=True)
    assert added.status_code == 200 and "Your passkey is added" in page
    assert page.count("<li><code>") == 10
    account = client.get("/account").get_data(as_text=True)
    assert "Work laptop" in account and "not used yet" in account
    [passkey] = passkeys_of(app, user)
    assert passkey.credential_id == authenticator.credentials[0].id
    assert passkey.transports == "internal" and not passkey.backup_eligible
    # The other browser proved no second factor: it is signed out, this one stays.
    assert other_browser.get("/account").status_code == 302
    assert client.get("/account").status_code == 200
    texts = [m.get_body(("plain",)).get_content() for m in mailbox.to(user.email)]
    [mail] = [text for text in texts if "passkey" in text]
    assert "Work laptop" in mail


def recovery_code_hashes(app, user):
    with app.app_context():
        return sorted(db.session.scalars(select(RecoveryCode.code_hash)
                                         .where(RecoveryCode.user_id == user.id)))


def test_a_second_passkey_keeps_the_recovery_codes(app, client, with_passkey, authenticator):
    codes_before = recovery_code_hashes(app, with_passkey)
    assert len(codes_before) == 10
    assert passkey_sign_in(client, authenticator).status_code == 302  # a recent sign-in
    added = add_passkey(client, SoftAuthenticator(), "Phone")
    assert added.status_code == 302 and added.headers["Location"] == "/account#passkeys"
    assert len(passkeys_of(app, with_passkey)) == 2
    assert recovery_code_hashes(app, with_passkey) == codes_before  # the same set, not a new one


def test_adding_needs_a_recent_sign_in(app, client, user, authenticator, clock):
    assert sign_in_with_password(client, user).status_code == 302
    clock.advance(app.config["STEP_UP_SECONDS"] + 1)
    refused = options(client, "/account/passkeys/options", "/account")
    assert refused.status_code == 403 and "sign in again" in refused.get_json()["error"]
    assert "Add a passkey" not in client.get("/account").get_data(as_text=True)


def test_an_address_nobody_proved_gets_no_passkey(client, make_user):
    """Someone who signed up with another person's address must not plant a factor there."""
    squatter = make_user("owner@example.com")
    assert sign_in_with_password(client, squatter).status_code == 302
    refused = options(client, "/account/passkeys/options", "/account")
    assert refused.status_code == 403 and refused.get_json()["error"].startswith("Confirm your")


def test_a_registration_answer_is_used_once(app, client, user, authenticator):
    assert sign_in_with_password(client, user).status_code == 302
    asked = options(client, "/account/passkeys/options", "/account").get_json()
    answer = json.dumps(authenticator.register(asked, ORIGIN))
    first = submit(client, "/account/passkeys", {"credential": answer, "name": "A"},
                   token_from="/account")
    assert first.status_code == 200
    again = submit(client, "/account/passkeys", {"credential": answer, "name": "B"},
                   token_from="/account")
    assert again.status_code == 302 and len(passkeys_of(app, user)) == 1
    # Another authenticator answering the same (spent) challenge adds nothing either: the
    # challenge refuses it, not the "registered already" check.
    other = json.dumps(SoftAuthenticator().register(asked, ORIGIN))
    refused = submit(client, "/account/passkeys", {"credential": other, "name": "C"},
                     token_from="/account")
    assert refused.status_code == 302 and len(passkeys_of(app, user)) == 1


def test_a_registration_made_for_another_account_is_refused(app, client, user, make_user,
                                                            authenticator):
    """Options asked for by one account cannot register a passkey on another."""
    other = make_user("eve@example.com", **OWNED)
    eve = app.test_client()
    assert sign_in_with_password(eve, other).status_code == 302
    asked = options(eve, "/account/passkeys/options", "/account").get_json()
    assert sign_in_with_password(client, user).status_code == 302
    answer = json.dumps(authenticator.register(asked, ORIGIN))
    refused = submit(client, "/account/passkeys", {"credential": answer, "name": "x"},
                     token_from="/account")
    assert refused.status_code == 302 and not passkeys_of(app, user)
    assert not passkeys_of(app, other)


@pytest.mark.parametrize("tamper", [{"origin": "https://evil.example"},
                                    {"rp_id": "evil.example"}])
def test_a_passkey_made_for_another_site_is_not_added(app, client, user, tamper):
    assert sign_in_with_password(client, user).status_code == 302
    asked = options(client, "/account/passkeys/options", "/account").get_json()
    answer = SoftAuthenticator().register(asked, tamper.get("origin", ORIGIN),
                                          rp_id=tamper.get("rp_id"))
    refused = submit(client, "/account/passkeys", {"credential": json.dumps(answer), "name": "x"},
                     token_from="/account")
    assert refused.status_code == 302 and not passkeys_of(app, user)


def test_the_options_need_the_pages_csrf_token(client, user):
    assert sign_in_with_password(client, user).status_code == 302
    assert client.post("/account/passkeys/options").status_code == 400
    assert client.post("/login/passkey/options").status_code == 400


# Signing in with a passkey alone ---------------------------------------------------------------

def test_a_passkey_alone_signs_in_and_says_so_in_the_tokens(app, client, with_passkey,
                                                              authenticator):
    landing = passkey_sign_in(client, authenticator, "?callback=symbols&state=s1")
    assert landing.status_code == 302 and landing.headers["Location"].startswith(SYMBOLS)
    params = parse_qs(urlsplit(landing.headers["Location"]).query)
    assert params["provider"] == ["passkey"] and params["state"] == ["s1"]
    claims = token_claims(client, landing)
    assert claims["amr"] == ["hwk", "mfa"] and claims["acr"] == "aal2"
    assert client.get("/account").status_code == 200  # and this browser is signed in
    assert "last used" in client.get("/account").get_data(as_text=True)
    [passkey] = passkeys_of(app, with_passkey)
    assert passkey.sign_count == 1 and passkey.last_used_at is not None


def test_a_synced_passkey_is_a_software_key(app, client, user):
    synced = SoftAuthenticator(backup_eligible=True, sign_count_step=0)
    browser = app.test_client()
    assert sign_in_with_password(browser, user).status_code == 302
    assert add_passkey(browser, synced).status_code == 200
    claims = token_claims(client, passkey_sign_in(client, synced, "?callback=symbols"))
    assert claims["amr"] == ["swk", "mfa"]
    # Its counter stays at 0, so only the single-use challenge stops a replay: it does.
    owner = app.test_client()
    asked = options(owner, "/login/passkey/options", "/login").get_json()
    answer = json.dumps(synced.assert_(asked, ORIGIN))
    first = submit(owner, "/login/passkey", {"credential": answer}, token_from="/login")
    assert first.status_code == 302
    stranger = app.test_client()
    replayed = submit(stranger, "/login/passkey", {"credential": answer}, token_from="/login")
    assert replayed.status_code == 401 and stranger.get("/account").status_code == 302


def test_a_sign_in_answer_is_used_once(client, with_passkey, authenticator):
    asked = options(client, "/login/passkey/options", "/login").get_json()
    answer = json.dumps(authenticator.assert_(asked, ORIGIN))
    stranger = client.application.test_client()
    first = submit(client, "/login/passkey", {"credential": answer}, token_from="/login")
    assert first.status_code == 302
    replayed = submit(stranger, "/login/passkey", {"credential": answer}, token_from="/login")
    assert replayed.status_code == 401 and stranger.get("/account").status_code == 302


@pytest.mark.parametrize("tamper", [{"origin": "https://evil.example"},
                                    {"rp_id": "evil.example"}])
def test_an_answer_made_on_another_site_is_refused(client, with_passkey, authenticator, tamper):
    """A phishing page (another origin) or a passkey of another relying party signs no one in."""
    refused = passkey_sign_in(client, authenticator, credential_id=authenticator.credentials[0].id,
                              **tamper)
    assert refused.status_code == 401
    assert "could not sign you in" in refused.get_data(as_text=True)
    assert client.get("/account").status_code == 302


def test_a_passkey_alone_must_verify_its_user(app, client, user):
    """Presence alone (a key without a PIN) is one factor: it does not replace the password."""
    no_pin = SoftAuthenticator(user_verification=False)
    browser = app.test_client()
    assert sign_in_with_password(browser, user).status_code == 302
    assert add_passkey(browser, no_pin).status_code == 200
    assert passkey_sign_in(client, no_pin).status_code == 401
    assert client.get("/account").status_code == 302


def test_a_cloned_passkey_is_refused(client, with_passkey, authenticator):
    """A counter that did not move on from the stored one: another copy of the key was used."""
    assert passkey_sign_in(client, authenticator).status_code == 302
    authenticator.credentials[0].sign_count = 0  # the clone's counter
    assert passkey_sign_in(client.application.test_client(), authenticator).status_code == 401


def test_an_unknown_or_removed_passkey_signs_no_one_in(client, user):
    stranger = SoftAuthenticator()
    stranger.register({"rp": {"id": "localhost"}, "user": {"id": "dXNlcg"}, "challenge": "AA"},
                      ORIGIN)
    refused = passkey_sign_in(client, stranger)
    assert refused.status_code == 401 and client.get("/account").status_code == 302


def test_a_disabled_account_cannot_sign_in_with_its_passkey(app, client, with_passkey,
                                                            authenticator):
    result = app.test_cli_runner().invoke(args=["users", "disable", with_passkey.email])
    assert result.exit_code == 0, result.output
    assert passkey_sign_in(client, authenticator).status_code == 401


def test_a_passkey_of_an_unconfirmed_account_opens_nothing_when_confirmation_is_required(
        app, client, with_passkey, authenticator):
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    with app.app_context():
        db.session.execute(update(User).where(User.id == with_passkey.id)
                           .values(email_verified=False))
        db.session.commit()
    assert passkey_sign_in(client, authenticator).status_code == 403
    assert client.get("/account").status_code == 302
    [passkey] = passkeys_of(app, with_passkey)
    assert passkey.sign_count == authenticator.credentials[0].sign_count  # the answer was heard
    with app.app_context():  # and its challenge spent, as every refused answer's
        assert None not in db.session.scalars(select(PasskeyChallenge.used_at)).all()


DEEP = '{"response": ' + "[" * 3000 + "]" * 3000 + "}"  # 6 KB; json.loads: RecursionError


@pytest.mark.parametrize(("credential", "status"), [
    ("", 401), ("not json", 401), ("[]", 401), ("{}", 401), ('{"response": {}}', 401),
    ('{"response": {"clientDataJSON": "!!"}}', 401),
    (json.dumps({"response": {"clientDataJSON": "eyJjaGFsbGVuZ2UiOjF9"}}), 401),  # challenge 1
    (DEEP, 401), ("x" * 70000, 413),
])
def test_a_malformed_answer_is_a_clear_refusal_never_a_500(client, user, credential, status):
    response = submit(client, "/login/passkey", {"credential": credential}, token_from="/login")
    assert response.status_code == status
    assert client.get("/account").status_code == 302


def test_json_nested_too_deep_is_refused_at_every_answer(app, client, with_passkey,
                                                        authenticator):
    """Adding and the second step, as signing in above: a refusal, never a 500."""
    assert sign_in_with_password(client, with_passkey).status_code == 302
    second = submit(client, "/login/second-factor/passkey", {"credential": DEEP},
                    token_from="/login/second-factor")
    assert second.status_code == 401
    assert second_step_with_passkey(client, authenticator).status_code == 302  # signed in now
    added = submit(client, "/account/passkeys", {"credential": DEEP, "name": "K"},
                   token_from="/account")
    assert added.status_code == 302 and len(passkeys_of(app, with_passkey)) == 1


def test_the_login_page_offers_passkeys_in_the_email_field(client):
    page = client.get("/login").get_data(as_text=True)
    assert 'autocomplete="username webauthn"' in page
    assert 'data-passkey="sign-in"' in page and "Sign in with a passkey" in page


def test_sign_in_options_ask_for_a_discoverable_passkey_verifying_its_user(client):
    asked = options(client, "/login/passkey/options", "/login")
    body = asked.get_json()
    assert asked.headers["Cache-Control"] == "no-store"
    assert body["rpId"] == "localhost" and body["allowCredentials"] == []
    assert body["userVerification"] == "required"


# A passkey as the second step ------------------------------------------------------------------

def second_step_with_passkey(client, authenticator, query="", **tamper):
    page = "/login/second-factor" + query
    asked = options(client, "/login/second-factor/passkey/options" + query, page)
    assert asked.status_code == 200, asked.get_data(as_text=True)
    answer = authenticator.assert_(asked.get_json(), ORIGIN, **tamper)
    return submit(client, "/login/second-factor/passkey" + query,
                  {"credential": json.dumps(answer)}, token_from=page)


def test_a_password_then_a_passkey_signs_in(client, with_passkey, authenticator):
    first = sign_in_with_password(client, with_passkey, "?callback=symbols&state=s1")
    assert first.headers["Location"].startswith("/login/second-factor?")
    assert client.get("/account").status_code == 302  # nothing opened yet
    query = "?" + urlsplit(first.headers["Location"]).query
    page = client.get("/login/second-factor" + query).get_data(as_text=True)
    assert "Use a passkey" in page
    landing = second_step_with_passkey(client, authenticator, query)
    assert landing.headers["Location"].startswith(SYMBOLS)
    claims = token_claims(client, landing)
    assert claims["amr"] == ["pwd", "hwk", "mfa"] and claims["acr"] == "aal2"


def test_the_second_steps_options_name_only_the_accounts_passkeys(client, with_passkey,
                                                                  authenticator):
    sign_in_with_password(client, with_passkey)
    asked = options(client, "/login/second-factor/passkey/options", "/login/second-factor")
    allowed = [c["id"] for c in asked.get_json()["allowCredentials"]]
    assert allowed == [b64url(authenticator.credentials[0].id)]
    assert asked.get_json()["userVerification"] == "preferred"


def test_as_a_second_step_presence_is_enough(app, client, user):
    no_pin = SoftAuthenticator(user_verification=False)
    browser = app.test_client()
    assert sign_in_with_password(browser, user).status_code == 302
    assert add_passkey(browser, no_pin).status_code == 200
    sign_in_with_password(client, user)
    assert second_step_with_passkey(client, no_pin).headers["Location"] == "/account"


def test_another_accounts_passkey_does_not_complete_a_second_step(app, client, with_passkey,
                                                                  make_user):
    """Mallory knows Ada's password and holds a passkey of her own account: it proves nothing
    about Ada."""
    mallory = make_user("mallory@example.com", **OWNED)
    hers = SoftAuthenticator()
    browser = app.test_client()
    assert sign_in_with_password(browser, mallory).status_code == 302
    assert add_passkey(browser, hers).status_code == 200
    sign_in_with_password(client, with_passkey)
    refused = second_step_with_passkey(client, hers, credential_id=hers.credentials[0].id)
    assert refused.status_code == 401 and client.get("/account").status_code == 302
    with app.app_context():
        assert db.session.scalars(select(AuditEvent).where(
            AuditEvent.event == "second_factor_failed",
            AuditEvent.user_id == with_passkey.id)).first() is not None
    [untouched] = passkeys_of(app, mallory)  # refused before it was verified or counted
    assert untouched.sign_count == 0 and untouched.last_used_at is None


def test_a_second_step_challenge_serves_only_its_own_pending_sign_in(app, client, with_passkey,
                                                                     authenticator):
    """Options asked for in one pending sign-in cannot complete another (of the same account)."""
    other = app.test_client()
    sign_in_with_password(other, with_passkey)
    asked = options(other, "/login/second-factor/passkey/options", "/login/second-factor")
    sign_in_with_password(client, with_passkey)
    answer = authenticator.assert_(asked.get_json(), ORIGIN)
    refused = submit(client, "/login/second-factor/passkey", {"credential": json.dumps(answer)},
                     token_from="/login/second-factor")
    assert refused.status_code == 401 and client.get("/account").status_code == 302


def test_the_sign_in_options_cannot_answer_a_second_step(client, with_passkey, authenticator):
    """A challenge is for one purpose: one made for signing in alone is not a second step's."""
    asked = options(client, "/login/passkey/options", "/login").get_json()
    sign_in_with_password(client, with_passkey)
    answer = authenticator.assert_(asked, ORIGIN)
    refused = submit(client, "/login/second-factor/passkey", {"credential": json.dumps(answer)},
                     token_from="/login/second-factor")
    assert refused.status_code == 401


def test_no_second_step_options_without_a_pending_sign_in(client, with_passkey):
    refused = options(client, "/login/second-factor/passkey/options", "/login")
    assert refused.status_code == 401 and "expired" in refused.get_json()["error"]


# The API, which cannot do a passkey ------------------------------------------------------------

def test_the_api_lists_only_what_it_can_complete(client, with_passkey):
    """v2 completes with a recovery code; a passkey answers only on the hosted pages' origin."""
    body = client.post("/api/v2/auth/login", json={"email": with_passkey.email,
                                                   "password": with_passkey.password}).get_json()
    assert body["mfa_required"] is True and body["methods"] == ["recovery_code"]
    assert "access_token" not in body


def test_an_account_with_only_a_passkey_and_no_codes_is_sent_to_the_hosted_login(
        app, client, with_passkey):
    def sessions():
        with app.app_context():
            return len(db.session.scalars(select(AuthSession)
                                          .where(AuthSession.user_id == with_passkey.id)).all())
    with app.app_context():
        db.session.execute(second_factors.delete(second_factors.RecoveryCode))
        db.session.commit()
    before = sessions()
    for path in ("/api/v2/auth/login", "/api/v1/auth/login"):
        refused = client.post(path, json={"email": with_passkey.email,
                                          "password": with_passkey.password,
                                          "captcha_token": ""})
        assert refused.status_code == 403, path
        assert refused.get_json()["code"] == "mfa_required"
        assert refused.get_json()["login_url"] == f"{ORIGIN}/login"
    assert sessions() == before


# Removing, resets and the operator -------------------------------------------------------------

def test_removing_a_passkey_needs_step_up_and_takes_the_codes_with_the_last(
        app, client, with_passkey, authenticator, clock, mailbox):
    sign_in_with_password(client, with_passkey)
    assert second_step_with_passkey(client, authenticator).status_code == 302
    [passkey] = passkeys_of(app, with_passkey)
    clock.advance(app.config["STEP_UP_SECONDS"] + 1)
    late = submit(client, f"/account/passkeys/{passkey.id}/remove", {}, token_from="/account")
    assert late.status_code == 302 and len(passkeys_of(app, with_passkey)) == 1
    fresh = app.test_client()  # a new sign-in: the step-up
    assert sign_in_with_password(fresh, with_passkey).status_code == 302
    assert second_step_with_passkey(fresh, authenticator).status_code == 302
    removed = submit(fresh, f"/account/passkeys/{passkey.id}/remove", {}, token_from="/account")
    assert removed.status_code == 302 and not passkeys_of(app, with_passkey)
    with app.app_context():
        user = db.session.get(User, with_passkey.id)
        assert second_factors.recovery_codes_left(user) == 0
        assert not second_factors.has_second_factor(user)
    assert any("removed" in m["Subject"].lower() or "removed" in m.get_body(("plain",))
               .get_content() for m in mailbox.to(with_passkey.email))
    assert passkey_sign_in(app.test_client(), authenticator).status_code == 401


def test_no_one_removes_another_accounts_passkey(app, client, with_passkey, make_user):
    [passkey] = passkeys_of(app, with_passkey)
    eve = make_user("eve@example.com", **OWNED)
    sign_in_with_password(client, eve)
    submit(client, f"/account/passkeys/{passkey.id}/remove", {}, token_from="/account")
    assert len(passkeys_of(app, with_passkey)) == 1


def test_the_operators_reset_removes_passkeys(app, with_passkey, authenticator):
    result = app.test_cli_runner().invoke(args=["users", "reset-mfa", with_passkey.email])
    assert result.exit_code == 0, result.output
    assert not passkeys_of(app, with_passkey)
    assert passkey_sign_in(app.test_client(), authenticator).status_code == 401


def test_challenges_expire_and_are_purged(app, client, clock):
    def challenges():
        with app.app_context():
            return db.session.scalars(select(PasskeyChallenge.challenge_hash)).all()

    assert options(client, "/login/passkey/options", "/login").status_code == 200
    [old] = challenges()
    clock.advance(2 * 86400)
    assert options(app.test_client(), "/login/passkey/options", "/login").status_code == 200
    result = app.test_cli_runner().invoke(args=["purge"])
    assert result.exit_code == 0, result.output
    [kept] = challenges()
    assert kept != old  # the live one stays


def test_a_challenge_serves_only_the_ceremony_it_was_made_for(app, client, with_passkey,
                                                              authenticator):
    """A registration's challenge (asked for by a signed-in browser) does not sign anyone in."""
    browser = app.test_client()
    assert sign_in_with_password(browser, with_passkey).status_code == 302
    assert second_step_with_passkey(browser, authenticator).status_code == 302
    registration = options(browser, "/account/passkeys/options", "/account").get_json()
    answer = authenticator.assert_({"challenge": registration["challenge"], "rpId": "localhost"},
                                   ORIGIN)
    refused = submit(client, "/login/passkey", {"credential": json.dumps(answer)},
                     token_from="/login")
    assert refused.status_code == 401 and client.get("/account").status_code == 302


def test_an_answer_naming_another_account_is_refused(client, with_passkey, make_user,
                                                     authenticator):
    """The user handle the browser reports must be the passkey's own account's: an answer that
    says otherwise has been tampered with."""
    other = make_user("eve@example.com")
    asked = options(client, "/login/passkey/options", "/login").get_json()
    answer = authenticator.assert_(asked, ORIGIN)
    answer["response"]["userHandle"] = b64url(other.id.encode())
    refused = submit(client, "/login/passkey", {"credential": json.dumps(answer)},
                     token_from="/login")
    assert refused.status_code == 401 and client.get("/account").status_code == 302


# Where the script and its CSP appear ------------------------------------------------------------

def test_the_pages_that_offer_passkeys_load_only_our_own_script(client, with_passkey):
    """The login page, the second step and the account page: our own scripts only (passkeys,
    and the show-password button beside a password field), from our origin, calling back only
    to us; nothing inline. A page with a password field and no passkeys runs the show-password
    script but may call nothing; a page with neither keeps the policy with no script."""
    strict = CONTENT_SECURITY_POLICY
    login = client.get("/login")
    assert login.headers["Content-Security-Policy"] == (
        f"{strict}; script-src 'self'; connect-src 'self'")
    assert re.findall(r"<script[^>]*>", login.get_data(as_text=True)) == [
        '<script src="/static/passkeys.js" defer>', '<script src="/static/show-password.js" defer>']
    sign_in_with_password(client, with_passkey)
    second = client.get("/login/second-factor")
    assert "script-src 'self'; connect-src 'self'" in second.headers["Content-Security-Policy"]
    signup = client.get("/signup")
    assert signup.headers["Content-Security-Policy"] == f"{strict}; script-src 'self'"
    assert re.findall(r"<script[^>]*>", signup.text) == [
        '<script src="/static/show-password.js" defer>']
    forgot = client.get("/forgot-password")
    assert forgot.headers["Content-Security-Policy"] == strict and "<script" not in forgot.text


def test_with_captcha_widget_the_login_policy_opens_to_both(app, client, user):
    change_settings(app, CAPTCHA_MODE="on", CAPTCHA_PROVIDER="turnstile", CAPTCHA_SECRET="s",
                    CAPTCHA_SITE_KEY="k", CAPTCHA_VERIFY_URL="http://127.0.0.1:9/siteverify")
    for _ in range(3):  # the sign-in asks for a captcha after a few failures
        submit(client, "/login", {"email": user.email, "password": "not the password"})
    page = submit(client, "/login", {"email": user.email, "password": "not the password"})
    assert "cf-turnstile" in page.text
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self' https://challenges.cloudflare.com;" in policy
    assert "connect-src 'self' https://challenges.cloudflare.com" in policy


@pytest.mark.parametrize("settings", [{"PUBLIC_URL": "http://127.0.0.1:5000"}])
def test_a_service_reached_by_ip_address_offers_no_passkeys(client, user):
    """WebAuthn takes a domain name as the relying party's id, never an IP address: no button
    that cannot work, no script, the strict policy."""
    only_ours = ['<script src="/static/show-password.js" defer>']  # calls nothing back
    login = client.get("/login")
    assert "passkey" not in login.text and re.findall(r"<script[^>]*>", login.text) == only_ours
    assert login.headers["Content-Security-Policy"] == \
        f"{CONTENT_SECURITY_POLICY}; script-src 'self'"
    sign_in_with_password(client, user)
    account = client.get("/account")
    assert "reached by its domain name" in account.text
    assert re.findall(r"<script[^>]*>", account.text) == [  # and the times' (calls nothing)
        *only_ours, '<script src="/static/local-times.js" defer>']


# Hostile input, forged forms and limits ----------------------------------------------------------

@pytest.mark.parametrize("path", ["/account/passkeys/%00/remove", "/account/passkeys/x/remove",
                                  "/account/sessions/%00/end", "/account/sessions/x/end"])
def test_an_id_that_is_no_id_is_a_404_page(app, client, with_passkey, path):
    """Never a query (PostgreSQL cannot compare a NUL: that was a 500)."""
    sign_in_with_password(client, with_passkey)
    response = submit(client, path, {}, token_from="/login/second-factor")
    assert response.status_code == 404 and "text/html" in response.content_type
    assert len(passkeys_of(app, with_passkey)) == 1


@pytest.mark.parametrize(("transports", "kept"), [
    (5, ""), ("usb", ""), ({"usb": 1}, ""), ([None, 5, "usb", "smoke-signal"], "usb"),
    (["hybrid"] * 40, "hybrid")])  # cut at 200 characters, it once stored "…,hybr": a 500 later
def test_hostile_transports_are_dropped_not_a_500(app, client, user, transports, kept):
    """Transports are the browser's hint: what is not a list of known names is left out."""
    sign_in_with_password(client, user)
    asked = options(client, "/account/passkeys/options", "/account").get_json()
    answer = SoftAuthenticator().register(asked, ORIGIN)
    answer["response"]["transports"] = transports
    added = submit(client, "/account/passkeys", {"credential": json.dumps(answer), "name": "K"},
                   token_from="/account")
    assert added.status_code == 200
    [passkey] = passkeys_of(app, user)
    assert passkey.transports == kept
    assert options(client, "/account/passkeys/options", "/account").status_code == 200


def test_every_passkey_form_needs_its_csrf_token(app, client, with_passkey, authenticator):
    """A page elsewhere cannot sign a browser in (into an account of its choosing), add, remove
    or complete anything with a forged post."""
    [passkey] = passkeys_of(app, with_passkey)
    asked = options(client, "/login/passkey/options", "/login").get_json()
    forged = {"credential": json.dumps(authenticator.assert_(asked, ORIGIN))}
    assert client.post("/login/passkey", data=forged).status_code == 400
    assert client.get("/account").status_code == 302  # not signed in
    sign_in_with_password(client, with_passkey)
    assert client.post("/login/second-factor/passkey", data=forged).status_code == 400
    assert client.get("/account").status_code == 302  # still waiting for the second step
    assert second_step_with_passkey(client, authenticator).status_code == 302
    assert client.post(f"/account/passkeys/{passkey.id}/remove").status_code == 400
    assert client.post("/account/passkeys", data={"credential": "{}", "name": "x"}
                       ).status_code == 400
    assert [p.id for p in passkeys_of(app, with_passkey)] == [passkey.id]


@pytest.mark.parametrize("settings", [{"PUBLIC_URL": ORIGIN, "RATELIMIT_ENABLED": True,
                                       "LIMIT_PASSKEY_OPTIONS": "2 per minute",
                                       "LIMIT_LOGIN_IP": "2 per minute"}])
def test_ceremonies_and_answers_are_limited_per_address(app, with_passkey, authenticator):
    """Each ceremony writes a challenge, each answer costs a signature check: neither is free.
    (From an address of its own: adding the passkey counted against the fixture's.)"""
    def browser_at_the_address():
        browser = app.test_client()
        browser.environ_base["REMOTE_ADDR"] = "203.0.113.9"
        return browser
    client = browser_at_the_address()
    token = csrf_token(client, "/login")
    asked = [client.post("/login/passkey/options", headers={"X-CSRFToken": token})
             for _ in range(3)]
    assert [a.status_code for a in asked] == [200, 200, 429]
    answers = [submit(browser_at_the_address(), "/login/passkey", {
        "credential": json.dumps(authenticator.assert_(a.get_json(), ORIGIN))},
        token_from="/login") for a in asked[:2]]
    assert [a.status_code for a in answers] == [302, 302]
    third = submit(client, "/login/passkey", {"credential": "{}"}, token_from="/login")
    assert third.status_code == 429 and third.headers["Retry-After"]


@pytest.mark.parametrize("settings", [{"PUBLIC_URL": "https://Auth.Example:443"}])
def test_the_origin_is_the_one_browsers_send_for_the_public_url(app, client, user, settings):
    """A browser sends `https://auth.example` for SVC_PUBLIC_URL `https://Auth.Example:443`
    (lower case, no default port): that origin, and only it, is accepted."""
    authenticator = SoftAuthenticator()
    assert sign_in_with_password(client, user).status_code == 302
    asked = options(client, "/account/passkeys/options", "/account").get_json()
    assert asked["rp"]["id"] == "auth.example"
    answer = authenticator.register(asked, "https://auth.example")
    added = submit(client, "/account/passkeys", {"credential": json.dumps(answer), "name": "K"},
                   token_from="/account")
    assert added.status_code == 200, added.get_data(as_text=True)
    for origin, status in (("https://auth.example:443", 401), ("https://auth.example", 302)):
        browser = app.test_client()
        assert passkey_sign_in(browser, authenticator, origin=origin).status_code == status


# A password reset ------------------------------------------------------------------------------

def reset_password(app, mailbox, user, new_password):
    owner = app.test_client()
    submit(owner, "/forgot-password", {"email": user.email})
    link = mailbox.last_link(user.email, "/reset-password")
    owner.get(link[link.index("/reset-password"):])
    assert submit(owner, "/reset-password", {"new_password": new_password}).status_code == 200


def test_after_a_reset_a_thiefs_passkey_no_longer_signs_in_alone(app, user, mailbox):
    """Someone who knew the password of an account without a second factor added a passkey:
    a way in on its own, like a provider. The owner's reset takes that away (it signs in only
    after the new password, which the thief does not know), as it unlinks the providers."""
    thief = SoftAuthenticator()
    stolen = app.test_client()
    assert sign_in_with_password(stolen, user).status_code == 302
    assert add_passkey(stolen, thief, "Thief").status_code == 200
    assert passkey_sign_in(app.test_client(), thief).status_code == 302  # alone, before

    reset_password(app, mailbox, user, "a new passphrase after the theft")
    assert stolen.get("/account").status_code == 302  # the thief's session ended with it
    refused = passkey_sign_in(app.test_client(), thief)
    assert refused.status_code == 401
    assert "only after the new password" in refused.get_data(as_text=True)
    [passkey] = passkeys_of(app, user)
    assert not passkey.signs_in_alone


def test_after_a_reset_the_owners_passkey_signs_in_alone_once_it_answered_a_second_step(
        app, with_passkey, authenticator, mailbox):
    new = "a new passphrase of the owner's"
    reset_password(app, mailbox, with_passkey, new)
    assert passkey_sign_in(app.test_client(), authenticator).status_code == 401
    owner = app.test_client()
    assert submit(owner, "/login", {"email": with_passkey.email, "password": new}).headers[
        "Location"].startswith("/login/second-factor")
    assert second_step_with_passkey(owner, authenticator).status_code == 302
    assert "since the reset" not in owner.get("/account").get_data(as_text=True)
    assert passkey_sign_in(app.test_client(), authenticator).status_code == 302  # alone again


def test_an_answer_after_the_challenges_five_minutes_is_refused(app, client, with_passkey,
                                                               authenticator, clock):
    asked = options(client, "/login/passkey/options", "/login").get_json()
    answer = json.dumps(authenticator.assert_(asked, ORIGIN))
    clock.advance(300)
    late = submit(client, "/login/passkey", {"credential": answer}, token_from="/login")
    assert late.status_code == 401 and client.get("/account").status_code == 302


def test_a_refused_answer_spends_its_challenge(app, client, with_passkey, authenticator):
    """Whatever was wrong with it (here, another origin's signature), a second answer to the
    same challenge is not listened to: a challenge gives one try."""
    asked = options(client, "/login/passkey/options", "/login").get_json()
    wrong = authenticator.assert_(asked, "https://evil.example")
    assert submit(client, "/login/passkey", {"credential": json.dumps(wrong)},
                  token_from="/login").status_code == 401
    right = authenticator.assert_(asked, ORIGIN)
    assert submit(client, "/login/passkey", {"credential": json.dumps(right)},
                  token_from="/login").status_code == 401
    assert client.get("/account").status_code == 302


def test_a_password_change_of_a_passkey_only_account_needs_a_recent_sign_in(
        app, client, with_passkey, authenticator, clock):
    """A passkey is a second factor: as with an authenticator app, a session that signed in a
    while ago changes the password only after signing in again."""
    assert passkey_sign_in(client, authenticator).status_code == 302
    clock.advance(app.config["STEP_UP_SECONDS"] + 1)
    refused = submit(client, "/account/password", {
        "current_password": with_passkey.password, "new_password": "a wholly new passphrase"},
        token_from="/account")
    assert refused.status_code == 403, refused.status_code
    assert submit(app.test_client(), "/login", {
        "email": with_passkey.email, "password": with_passkey.password}).status_code == 302


@pytest.mark.parametrize("settings", [{"PUBLIC_URL": ORIGIN, **races.POOL}])
def test_a_burst_of_wrong_passkey_answers_checks_exactly_the_sign_ins_attempts(
        app, client, with_passkey, monkeypatch):
    """16 at once (tests/support/races.py), each a second step answer that does not hold."""
    sign_in_with_password(client, with_passkey)
    token = csrf_token(client, "/login/second-factor")
    tabs = [races.browser_like(client, app) for _ in range(races.BURST)]
    with races.burst(monkeypatch, passkeys, "_claimed") as burst:
        answers = burst.send(lambda i: tabs[i].post("/login/second-factor/passkey", data={
            "csrf_token": token, "credential": "{}"}))
    assert burst.checked == 5  # MFA_PENDING_ATTEMPTS
    assert all(answer.status_code in (302, 401) for answer in answers)
    assert client.get("/account").status_code == 302
