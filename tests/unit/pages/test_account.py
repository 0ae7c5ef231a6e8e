"""Recovery and the account page, through the test client.

The account page's name (app/pages/account.py): the person changes their own name with the
page's form (its CSRF token), checked as the API and the sign-up check one, audited; a refused
change is a 4xx on the page and changes nothing. (The sites hearing it:
tests/events/test_own_name.py.) And the plan, by its name in the page's language."""

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from sqlalchemy import select

from app.domain.accounts import identities
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.domain.clients.sites import Site
from app.extensions import db
from app.infra.hashing import Hasher
from app.models import AuditEvent, User
from tests.support import races
from tests.support.accounts import PASSWORD, signed_in_now
from tests.support.pages import csrf_token, submit
from tests.support.sites import SYMBOLS

pytestmark = pytest.mark.app_settings("pages")

NEW = "a brand new passphrase"


def second_device(app, user):
    """Another browser, signed in as the same user."""
    other = app.test_client()
    assert submit(other, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    return other


def post_action(client, path):
    return client.post(path, data={"csrf_token": csrf_token(client, "/account")})


# Recovery -------------------------------------------------------------------------------------

def reset_link(client, mailbox, email, query=""):
    submit(client, "/forgot-password" + query, {"email": email})
    return mailbox.last_link(email, "/reset-password")


def test_forgot_shows_the_same_page_for_any_address(client, user):
    known = submit(client, "/forgot-password", {"email": user.email})
    unknown = submit(client, "/forgot-password", {"email": "nobody@example.com"})
    assert known.status_code == unknown.status_code == 202
    # The pages differ in the address and the language picker's CSRF token (it holds the time).
    token = re.compile(r'name="csrf_token" value="[^"]*"')
    assert (token.sub("", known.text.replace(user.email, "X"))
            == token.sub("", unknown.text.replace("nobody@example.com", "X")))


@pytest.mark.parametrize("email", ["not-an-address", "ada@example", "a b@example.com"])
def test_forgot_shows_a_field_error_for_a_malformed_address(client, mailbox, email):
    page = submit(client, "/forgot-password", {"email": email})
    assert page.status_code == 422
    assert "Enter an email address, such as ada@example.com." in page.text
    assert mailbox.messages == []


def test_the_reset_link_moves_the_token_out_of_the_address_bar(client, user, mailbox):
    link = reset_link(client, mailbox, user.email)
    first = client.get(urlsplit(link).path + "?" + urlsplit(link).query)
    assert first.status_code == 302 and "token" not in first.headers["Location"]
    page = client.get(first.headers["Location"])
    assert page.status_code == 200 and b"Choose a new password" in page.data
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert page.headers["Cache-Control"] == "no-store"


def test_a_reset_through_the_pages_ends_sessions_and_does_not_sign_in(app, client, user,
                                                                      mailbox):
    other = second_device(app, user)
    link = reset_link(client, mailbox, user.email)
    client.get(link.removeprefix("http://127.0.0.1:5000"))
    done = submit(client, "/reset-password", {"new_password": NEW})
    assert done.status_code == 200 and b"Password updated" in done.data
    assert other.get("/account").status_code == 302  # the other device is signed out
    assert client.get("/account").status_code == 302  # no automatic sign-in
    assert submit(client, "/login", {"email": user.email, "password": NEW}).status_code == 302


# What travels through mail (issue 12, item 9): a forgot-password request made with someone
# else's state and PKCE challenge must not put them into the owner's genuine reset mail, where the
# owner's next sign-in would hand a code redeemable with that someone's verifier.
ATTACKER_STATE = "attacker-state-5f1c"
ATTACKER_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
ATTACKER_ENTRIES = [
    {"redirect_uri": SYMBOLS, "state": ATTACKER_STATE, "code_challenge": ATTACKER_CHALLENGE,
     "code_challenge_method": "S256"},
    {"callback": "symbols", "state": ATTACKER_STATE, "code_challenge": ATTACKER_CHALLENGE,
     "code_challenge_method": "S256"},
]


def attacker_traces(text):
    return [trace for trace in (ATTACKER_STATE, ATTACKER_CHALLENGE, "symbols.example/cb",
                                "symbols.example%2Fcb", "redirect_uri", "code_challenge", "state=")
            if trace in text]


@pytest.mark.parametrize("entry", ATTACKER_ENTRIES, ids=["redirect_uri", "callback"])
def test_the_reset_mail_carries_only_the_site_name(app, client, user, mailbox, entry):
    submit(client, "/forgot-password?" + urlencode(entry), {"email": user.email})
    [mail] = mailbox.to(user.email)
    for part in ("plain", "html"):
        assert attacker_traces(mail.get_body((part,)).get_content()) == []
    link = mailbox.last_link(user.email, "/reset-password")
    assert sorted(parse_qs(urlsplit(link).query)) == ["site", "token"]
    assert parse_qs(urlsplit(link).query)["site"] == ["symbols"]

    owner = app.test_client()  # the owner opens the mail in a browser of their own
    moved = owner.get(urlsplit(link).path + "?" + urlsplit(link).query)
    assert moved.headers["Location"] == "/reset-password?site=symbols"
    form = owner.get(moved.headers["Location"])
    done = submit(owner, "/reset-password?site=symbols", {"new_password": NEW})
    assert done.status_code == 200 and b"Password updated" in done.data
    for page in (form.text, done.text):
        assert attacker_traces(page) == []
    # Back to the site's own page, which starts a sign-in with its own state and challenge.
    assert '<a class="button" href="https://symbols.example/">Back to symbols</a>' in done.text


@pytest.mark.parametrize("untrusted_site", ["evil", "SYMBOLS", "https://evil.example", ""])
def test_a_site_name_that_is_not_registered_is_dropped(client, user, mailbox, untrusted_site):
    link = reset_link(client, mailbox, user.email)
    moved = client.get(urlsplit(link).path + "?" + urlsplit(link).query + "&"
                       + urlencode({"site": untrusted_site}))
    assert moved.headers["Location"] == "/reset-password"
    path = "/reset-password?" + urlencode({"site": untrusted_site})
    done = submit(client, path, {"new_password": NEW})
    assert done.status_code == 200 and "Back to" not in done.text
    assert '<a class="button" href="/login">Sign in</a>' in done.text
    assert untrusted_site == "" or untrusted_site not in done.text


def test_a_site_is_found_at_its_first_origin_or_its_redirect_uris_origin():
    assert Site("s", ("https://auth.s.example/cb",), ("https://www.s.example",)).home == \
        "https://www.s.example/"
    assert Site("s", ("https://auth.s.example:8443/cb?x=1",), ()).home == \
        "https://auth.s.example:8443/"


def test_a_weak_new_password_is_shown_on_the_field(client, user, mailbox):
    client.get(reset_link(client, mailbox, user.email).removeprefix("http://127.0.0.1:5000"))
    response = submit(client, "/reset-password", {"new_password": "password1"})
    assert response.status_code == 422 and b'id="new_password-error"' in response.data


def test_a_used_link_is_a_clear_error_page(client, user, mailbox):
    link = reset_link(client, mailbox, user.email).removeprefix("http://127.0.0.1:5000")
    client.get(link)
    submit(client, "/reset-password", {"new_password": NEW})
    again = client.get(client.get(link).headers["Location"])
    assert again.status_code == 400 and b"Ask for a new one" in again.data


# The account page -----------------------------------------------------------------------------

def test_the_account_page_needs_a_signed_in_browser(client):
    assert client.get("/account").headers["Location"] == "/login"


def test_the_account_page_shows_the_person_and_their_devices(app, signed_in, user):
    second_device(app, user)
    page = signed_in.get("/account").text
    assert user.email in page and "not confirmed" in page and "<dd>Free</dd>" in page
    assert len(re.findall(r'action="/account/sessions/[0-9a-f-]{36}/end"', page)) == 2
    assert "this browser" in page


def session_of(browser):
    with browser.session_transaction() as cookie:
        return cookie["_user_id"]


def test_signing_out_another_device(app, signed_in, user):
    other = second_device(app, user)
    post_action(signed_in, f"/account/sessions/{session_of(other)}/end")
    assert other.get("/account").status_code == 302
    assert signed_in.get("/account").status_code == 200


def test_signing_out_every_other_device(app, signed_in, user):
    others = [second_device(app, user) for _ in range(2)]
    post_action(signed_in, "/account/sessions/end-others")
    assert [o.get("/account").status_code for o in others] == [302, 302]
    assert signed_in.get("/account").status_code == 200


def test_a_session_of_someone_else_cannot_be_ended(app, signed_in, make_user):
    stranger = make_user("stranger@example.com")
    stranger_browser = second_device(app, stranger)
    response = post_action(signed_in, f"/account/sessions/{session_of(stranger_browser)}/end")
    assert response.status_code == 404
    assert stranger_browser.get("/account").status_code == 200


def test_changing_the_password_signs_out_the_other_devices(app, signed_in, user, mailbox):
    other = second_device(app, user)
    response = submit(signed_in, "/account/password",
                      {"current_password": PASSWORD, "new_password": NEW}, token_from="/account")
    assert response.headers["Location"] == "/account"
    assert other.get("/account").status_code == 302
    assert signed_in.get("/account").status_code == 200
    assert mailbox.to(user.email)[-1]["Subject"] == "Your password was changed"


def test_changing_the_password_needs_the_current_one(signed_in):
    response = submit(signed_in, "/account/password",
                      {"current_password": "not it at all", "new_password": NEW},
                      token_from="/account")
    assert response.status_code == 401 and b"current password is not right" in response.data


def confirm_address(app, account):
    with app.app_context():
        from app.domain.accounts import accounts
        from app.extensions import db
        from app.models import User
        accounts.prove_address(db.session.get(User, account.id))
        db.session.commit()


def test_linked_providers_can_be_unlinked_while_a_password_remains(app, signed_in, user):
    confirm_address(app, user)
    with app.app_context():
        from app.extensions import db
        from app.models import User
        row = db.session.get(User, user.id)
        identities.link(row, signed_in_now(row), Profile("github", "77", user.email, True, "Ada"),
                        ClientInfo())
    assert "Unlink" in signed_in.get("/account").text
    post_action(signed_in, "/account/unlink/github")
    page = signed_in.get("/account").text
    assert "GitHub is no longer linked." in page and "Unlink" not in page


def test_linking_starts_at_the_provider_in_link_mode(app, signed_in, user):
    confirm_address(app, user)
    with signed_in:
        response = post_action(signed_in, "/account/link/github")
        assert response.status_code == 302
        from flask import session
        pending = next(iter(session["svc_oauth"].values()))
    assert pending["mode"] == "link" and pending["user_id"] == user.id


def test_resending_the_confirmation_from_the_account(signed_in, user, mailbox):
    post_action(signed_in, "/account/confirm-email")
    assert mailbox.last_link(user.email, "/confirm-email")


@pytest.mark.parametrize("path", ["/account/password", "/account/sessions/end-others",
                                  "/account/unlink/github", "/account/link/github"])
def test_account_actions_need_the_csrf_token(signed_in, path):
    assert signed_in.post(path, data={}).status_code == 400


class TestWrongCurrentPasswordsAtOnce:
    """16 at once (tests/support/races.py): exactly the account's limit are hashed."""

    @pytest.fixture
    def settings(self, settings):
        return {**settings, **races.POOL, "RATELIMIT_ENABLED": True,
                "LIMIT_LOGIN": "1000 per minute", "LIMIT_PASSWORD_CHANGE_FAILURES": "5 per hour"}

    def test_five(self, app, signed_in, monkeypatch):
        token = csrf_token(signed_in, "/account")
        tabs = [races.browser_like(signed_in, app) for _ in range(races.BURST)]
        with races.burst(monkeypatch, Hasher, "verify") as burst:
            answers = burst.send(lambda i: tabs[i].post("/account/password", data={
                "csrf_token": token, "current_password": "not it at all", "new_password": NEW}))
        assert burst.checked == 5
        assert races.statuses(answers) == [401] * 5 + [429] * 11


@pytest.fixture
def signed_in(client, user):
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    return client


def _state(app, user):
    with app.app_context():
        name = db.session.get(User, user.id).full_name
        audited = db.session.scalars(select(AuditEvent.changes).where(
            AuditEvent.user_id == user.id, AuditEvent.event == "profile_changed")).all()
        return name, audited


def test_the_account_page_offers_the_name_to_change(signed_in):
    page = signed_in.get("/account").text
    assert 'action="/account/name"' in page and 'id="new-name"' in page
    assert 'value="Ada"' in page


def test_a_person_changes_their_own_name(app, signed_in, user):
    changed = submit(signed_in, "/account/name", {"full_name": "  Ada Lovelace "},
                     token_from="/account")
    assert changed.status_code == 302 and changed.headers["Location"] == "/account"
    name, audited = _state(app, user)
    assert name == "Ada Lovelace"
    assert len(audited) == 1 and "Ada Lovelace" in str(audited[0])
    page = signed_in.get("/account").text
    assert "Name changed." in page and 'value="Ada Lovelace"' in page


def test_the_name_may_be_emptied(app, signed_in, user):
    assert submit(signed_in, "/account/name", {"full_name": "  "},
                  token_from="/account").status_code == 302
    assert _state(app, user)[0] == ""


def test_without_the_pages_csrf_token_nothing_changes(app, signed_in, user):
    assert signed_in.post("/account/name", data={"full_name": "Mallory"}).status_code == 400
    forged = signed_in.post("/account/name", data={"full_name": "Mallory", "csrf_token": "x"})
    assert forged.status_code == 400
    assert _state(app, user) == ("Ada", [])


def test_signed_out_it_changes_nothing(app, client, user):
    asked = submit(client, "/account/name", {"full_name": "Mallory"}, token_from="/login")
    assert asked.status_code in (302, 401) and _state(app, user) == ("Ada", [])


@pytest.mark.parametrize("name", ["x" * 201, "Ada\x00", "Ada\u202eecalevoL", "Ada\nLovelace",
                                  "\x1b[31mAda"])
def test_a_bad_name_is_refused_on_the_page_and_changes_nothing(app, signed_in, user, name):
    refused = submit(signed_in, "/account/name", {"full_name": name}, token_from="/account")
    assert refused.status_code == 422
    assert 'aria-invalid="true"' in refused.text and 'id="new-name-error"' in refused.text
    assert _state(app, user) == ("Ada", [])


def test_a_field_too_many_is_no_error(app, signed_in, user):
    # A form with other fields (a forged one) changes the name only.
    changed = submit(signed_in, "/account/name", {"full_name": "Ada L.", "plan": "team",
                                                  "email": "mallory@example.com"},
                     token_from="/account")
    assert changed.status_code == 302
    with app.app_context():
        found = db.session.get(User, user.id)
        assert (found.full_name, found.plan, found.email) == ("Ada L.", "free", user.email)



def test_the_page_says_it_in_the_persons_language(app, signed_in, user):
    signed_in.set_cookie("svc_lang", "de")
    changed = submit(signed_in, "/account/name", {"full_name": "Ada K."}, token_from="/account")
    assert changed.status_code == 302
    page = signed_in.get("/account").text
    assert "Name geändert." in page and "Namen ändern" in page


def plan_shown(client, user, language: str) -> str:
    assert submit(client, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    page = client.get("/account", headers={"Accept-Language": language})
    found = re.search(r"<dt>[^<]*</dt><dd>([^<]*)</dd>\s*</dl>", page.text)
    assert found, page.text
    return found.group(1)


@pytest.mark.parametrize(("language", "shown"), [
    ("en", "Free"), ("de", "Kostenlos"), ("fr", "Gratuit"), ("es", "Gratis")])
def test_the_plan_shows_by_its_name_in_the_pages_language(client, make_user, language, shown):
    assert plan_shown(client, make_user(), language) == shown


class TestNamedByTheOperator:
    @pytest.fixture
    def settings(self):
        return {"PLANS": "free,gold,silver",
                "PLAN_NAMES": {"gold": {"en": "Gold", "de": "Goldtarif"}}}

    @pytest.mark.parametrize(("plan", "language", "shown"), [
        ("gold", "de", "Goldtarif"), ("gold", "fr", "Gold"), ("silver", "de", "silver")])
    def test_a_named_plan_and_one_without_a_name(self, client, make_user, plan, language,
                                                 shown):
        assert plan_shown(client, make_user(plan=plan), language) == shown
