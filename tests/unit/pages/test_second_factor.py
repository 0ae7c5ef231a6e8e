"""Authenticator apps and recovery codes on the hosted pages: enrolment, the second step of a
sign-in, and the attacks on them (codes from pyotp at the fake clock)."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.accounts import OWNED
from tests.support.pages import csrf_token, submit
from tests.support.pages import sign_in_with_password as password_step
from tests.support.second_factors import code_at, enrol, enrolled_user
from tests.support.sites import SYMBOLS

pytestmark = pytest.mark.app_settings("pages")


def code_step(client, code, query=""):
    # (The CSRF token of the login page: the second step's own answers 401 once it is spent.)
    return submit(client, "/login/second-factor" + query, {"code": code}, token_from="/login")


# Enrolment -------------------------------------------------------------------------------------

@pytest.fixture
def user(make_user):
    """The account of these tests, its address proved: enrolling a factor needs that."""
    return make_user(**OWNED)


def test_an_account_whose_address_nobody_proved_cannot_enrol_a_factor(app, client, make_user):
    """Someone who signed up with another person's address must not plant a factor there: it
    would outlive the owner's reset (factors do) and keep the owner out."""
    squatter = make_user("owner@example.com")  # signed up by someone else; never confirmed
    assert submit(client, "/login", {"email": squatter.email,
                                     "password": squatter.password}).status_code == 302
    refused = submit(client, "/account/totp/start", {}, token_from="/account")
    assert refused.status_code == 302
    setup = client.get("/account/totp")
    assert setup.status_code == 302, setup.text[:300]
    assert "Confirm your email address before adding" in client.get("/account").text
    with app.app_context():
        from app.extensions import db
        from app.models import TotpFactor

        assert db.session.query(TotpFactor).count() == 0

def test_enrolment_shows_a_server_drawn_qr_code_and_the_key_and_needs_one_code(
        signed_in, clock, mailbox, user):
    submit(signed_in, "/account/totp/start", {}, token_from="/account")
    page = signed_in.get("/account/totp")
    assert page.status_code == 200
    assert "<svg" in page.text and "<script" not in page.text and 'class="key"' in page.text
    assert "script-src" not in page.headers["Content-Security-Policy"]
    assert submit(signed_in, "/account/totp", {"code": "000000"}).status_code == 401
    # Not on until a right code confirms it: the account page still offers to set it up.
    assert "Set up an authenticator app" in signed_in.get("/account").text
    secret = re.search(r'<code class="key">([A-Z2-7 ]+)</code>', page.text).group(1)
    done = submit(signed_in, "/account/totp", {"code": code_at(secret.replace(" ", ""), clock)})
    codes = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", done.text)
    assert done.status_code == 200 and len(set(codes)) == 10
    assert done.headers["Cache-Control"] == "no-store"
    account_page = signed_in.get("/account").text
    assert "Recovery codes left: 10" in account_page
    assert any("second factor was added" in m["Subject"] for m in mailbox.to(user.email))


def test_enrolment_ends_the_other_sessions_of_the_account(app, signed_in, clock, user, login):
    tokens = login(user)
    enrol(signed_in, clock)
    assert app.test_client().get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).status_code == 401
    assert signed_in.get("/account").status_code == 200  # the enrolling browser stays in


def test_a_browser_signed_in_before_the_enrolment_gets_no_single_sign_on(app, signed_in, clock,
                                                                         user):
    before = app.test_client()
    assert password_step(before, user).headers["Location"] == "/account"
    enrol(signed_in, clock)
    page = before.get("/login?callback=symbols&state=s1")
    assert page.status_code == 200 and "code=" not in page.headers.get("Location", "")
    assert before.get("/account").status_code == 302


# Signing in ------------------------------------------------------------------------------------

@pytest.fixture
def enrolled(app, make_user, clock):
    return enrolled_user(app, make_user, clock)


def test_the_password_alone_opens_no_session(client, enrolled):
    account, _secret, _codes = enrolled
    response = password_step(client, account)
    assert response.status_code == 302 and response.headers["Location"] == "/login/second-factor"
    assert client.get("/account").status_code == 302  # not signed in
    page = client.get("/login/second-factor")
    assert page.status_code == 200 and account.email in page.text


def test_a_totp_code_completes_the_sign_in(client, enrolled, clock):
    account, secret, _codes = enrolled
    password_step(client, account)
    response = code_step(client, code_at(secret, clock))
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    assert client.get("/account").status_code == 200


def test_a_client_site_gets_its_code_only_after_the_second_factor(client, enrolled, clock):
    account, secret, _codes = enrolled
    query = "?callback=symbols&state=s1"
    first = password_step(client, account, query)
    assert first.headers["Location"].startswith("/login/second-factor?")
    assert SYMBOLS not in first.headers["Location"].split("?")[0]
    carried = "?" + urlsplit(first.headers["Location"]).query
    back = code_step(client, code_at(secret, clock), carried)
    target = back.headers["Location"]
    assert target.startswith(SYMBOLS)
    params = parse_qs(urlsplit(target).query)
    assert params["state"] == ["s1"]
    tokens = client.post("/api/v2/auth/exchange-code",
                         json={"code": params["code"][0], "provider": "password"})
    assert tokens.status_code == 200


def test_a_second_step_for_another_target_is_refused(client, enrolled, clock):
    account, secret, _codes = enrolled
    first = password_step(client, account, "?callback=symbols&state=s1")
    assert client.get("/login/second-factor?callback=footprints&state=s1").status_code == 401
    swapped = submit(client, "/login/second-factor?callback=footprints&state=s1",
                     {"code": code_at(secret, clock)}, token_from=first.headers["Location"])
    assert swapped.status_code == 401


def test_a_totp_code_used_once_is_refused_again(app, enrolled, clock):
    account, secret, _codes = enrolled
    first, second = app.test_client(), app.test_client()
    code = code_at(secret, clock)
    password_step(first, account)
    assert code_step(first, code).status_code == 302
    password_step(second, account)
    assert code_step(second, code).status_code == 401
    assert second.get("/account").status_code == 302


@pytest.mark.parametrize(("steps", "accepted"), [(-2, False), (-1, True), (1, True), (2, False)])
def test_codes_are_accepted_one_step_either_side_of_now(client, enrolled, clock, steps, accepted):
    account, secret, _codes = enrolled
    clock.advance(120)  # well past the step the enrolment used
    password_step(client, account)
    assert (code_step(client, code_at(secret, clock, steps)).status_code == 302) is accepted


def test_a_recovery_code_signs_in_once(app, enrolled):
    account, _secret, codes = enrolled
    first, second = app.test_client(), app.test_client()
    password_step(first, account)
    assert code_step(first, codes[0].upper()).status_code == 302  # case does not matter
    assert "Recovery codes left: 9" in first.get("/account").text
    password_step(second, account)
    assert code_step(second, codes[0]).status_code == 401


def test_guessing_ends_the_pending_sign_in_and_then_the_account_is_limited(app, enrolled, clock):
    account, secret, _codes = enrolled
    client = app.test_client()
    password_step(client, account)
    statuses = [code_step(client, f"{n:06d}").status_code for n in range(5)]
    assert statuses == [401] * 5
    # The pending sign-in is spent: even the right code does not complete it now.
    assert code_step(client, code_at(secret, clock)).status_code == 401
    assert client.get("/account").status_code == 302
    # Another pending sign-in gets the rest of the account's allowance (10 an hour), then 429.
    password_step(client, account)
    statuses = [code_step(client, f"{n:06d}").status_code for n in range(10, 15)]
    assert statuses == [401] * 5
    password_step(client, account)
    limited = code_step(client, code_at(secret, clock))
    assert limited.status_code == 429 and "Retry-After" in limited.headers


def test_a_pending_sign_in_expires(client, enrolled, clock):
    account, secret, _codes = enrolled
    password_step(client, account)
    clock.advance(301)
    assert code_step(client, code_at(secret, clock)).status_code == 401
    assert client.get("/account").status_code == 302


def test_a_password_reset_keeps_the_second_factor(client, enrolled, mailbox, clock):
    account, secret, _codes = enrolled
    submit(client, "/forgot-password", {"email": account.email})
    link = mailbox.last_link(account.email, "/reset-password")
    client.get(urlsplit(link).path + "?" + urlsplit(link).query)
    submit(client, "/reset-password", {"new_password": "a brand new passphrase"})
    response = submit(client, "/login", {"email": account.email,
                                         "password": "a brand new passphrase"})
    assert response.headers["Location"] == "/login/second-factor"


def test_a_reset_removes_a_factor_set_while_nobody_had_proved_the_address(app, client, make_user,
                                                                          mailbox):
    """The backstop of the enrolment rule: a factor on an unproved address is not the owner's."""
    squatted = make_user("owner@example.com")
    with app.app_context():
        from app.domain.clock import now
        from app.extensions import db
        from app.models import TotpFactor

        db.session.add(TotpFactor(user_id=squatted.id, secret="JBSWY3DPEHPK3PXP",
                                  created_at=now(), confirmed_at=now()))
        db.session.commit()
    submit(client, "/forgot-password", {"email": squatted.email})
    link = mailbox.last_link(squatted.email, "/reset-password")
    client.get(urlsplit(link).path + "?" + urlsplit(link).query)
    submit(client, "/reset-password", {"new_password": "a brand new passphrase"})
    response = submit(client, "/login", {"email": squatted.email,
                                         "password": "a brand new passphrase"})
    assert response.headers["Location"] == "/account"  # no second step: the factor is gone


# Step-up ---------------------------------------------------------------------------------------

def post_action(client, path, data=None):
    return client.post(path, data={"csrf_token": csrf_token(client, "/account"), **(data or {})})


def test_removing_the_app_needs_a_recent_sign_in_or_a_fresh_code(app, client, enrolled, clock,
                                                                  mailbox):
    account, secret, _codes = enrolled
    password_step(client, account)
    code_step(client, code_at(secret, clock))
    clock.advance(601)
    refused = post_action(client, "/account/totp/remove")
    assert refused.status_code == 302 and "Recovery codes left" in client.get("/account").text
    assert post_action(client, "/account/totp/remove", {"code": "123456"}).status_code == 302
    assert "Recovery codes left" in client.get("/account").text
    assert post_action(client, "/account/totp/remove",
                       {"code": code_at(secret, clock)}).status_code == 302
    assert "Recovery codes left" not in client.get("/account").text
    assert any("removed" in m["Subject"] for m in mailbox.to(account.email))
    # Signing in asks for no code any more.
    assert password_step(app.test_client(), account).headers["Location"] == "/account"


def test_setting_up_an_app_needs_a_recent_sign_in(signed_in, clock):
    clock.advance(601)
    assert "sign in again" in signed_in.get("/account").text
    post_action(signed_in, "/account/totp/start")
    assert signed_in.get("/account/totp").status_code == 302  # nothing started


def test_new_recovery_codes_void_the_old_set(app, enrolled, clock):
    account, secret, codes = enrolled
    client = app.test_client()
    password_step(client, account)
    code_step(client, code_at(secret, clock))
    page = post_action(client, "/account/recovery-codes")
    fresh = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", page.text)
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    other = app.test_client()
    password_step(other, account)
    assert code_step(other, codes[1]).status_code == 401
    assert code_step(other, fresh[0]).status_code == 302


def test_the_operator_can_clear_the_factors(app, enrolled, mailbox):
    account, _secret, _codes = enrolled
    result = app.test_cli_runner().invoke(args=["users", "reset-mfa", account.email])
    assert result.exit_code == 0, result.output
    client = app.test_client()
    assert password_step(client, account).headers["Location"] == "/account"
    with app.app_context():
        from sqlalchemy import select

        from app.extensions import db
        from app.models import AuditEvent
        events = list(db.session.scalars(select(AuditEvent.event)))
    assert "second_factors_reset" in events


def test_a_client_site_s_tokens_say_a_second_factor_was_used_on_every_sign_on(
        client, enrolled, clock):
    import jwt
    account, secret, _codes = enrolled
    first = password_step(client, account, "?callback=symbols&state=s1")
    carried = "?" + urlsplit(first.headers["Location"]).query
    back = code_step(client, code_at(secret, clock), carried)
    # ...and single sign-on from the same browser session later.
    again = client.get("/login?callback=footprints&state=s2")
    for location, provider in ((back.headers["Location"], "password"),
                               (again.headers["Location"], "password")):
        code = parse_qs(urlsplit(location).query)["code"][0]
        tokens = client.post("/api/v2/auth/exchange-code",
                             json={"code": code, "provider": provider}).get_json()
        claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
        assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == "aal2"


def test_changing_the_password_needs_a_recent_sign_in_or_a_fresh_code(client, enrolled, clock):
    account, secret, _codes = enrolled
    password_step(client, account)
    code_step(client, code_at(secret, clock))
    clock.advance(601)
    change = {"current_password": account.password, "new_password": "a brand new passphrase"}
    page = client.get("/account").text
    assert 'name="second_factor_code"' in page
    refused = submit(client, "/account/password", change, token_from="/account")
    assert refused.status_code == 403
    wrong = submit(client, "/account/password", {**change, "second_factor_code": "123456"},
                   token_from="/account")
    assert wrong.status_code == 401
    fresh = {**change, "second_factor_code": code_at(secret, clock)}
    done = submit(client, "/account/password", fresh, token_from="/account")
    assert done.status_code == 302


def test_the_setup_page_offers_the_otpauth_link_and_the_codes_a_download(app, make_user, clock):
    import re
    from html import unescape
    from urllib.parse import unquote

    from tests.support.accounts import OWNED
    from tests.support.pages import submit
    from tests.support.second_factors import code_at
    account = make_user("phone@example.com", **OWNED)
    browser = app.test_client()
    submit(browser, "/login", {"email": account.email, "password": account.password})
    submit(browser, "/account/totp/start", {}, token_from="/account")
    page = browser.get("/account/totp").text
    assert 'href="otpauth://totp/' in page
    secret = re.search(r'<code class="key">([A-Z2-7 ]+)</code>', page).group(1).replace(" ", "")
    done = submit(browser, "/account/totp", {"code": code_at(secret, clock)}).text
    codes = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", done)
    download = unescape(re.search(r'href="data:text/plain;charset=utf-8,([^"]+)"', done).group(1))
    assert unquote(download).split() == codes
