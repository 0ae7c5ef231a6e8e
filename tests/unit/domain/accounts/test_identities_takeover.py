"""Account takeover through identity changes, tried as an attacker would (issue 12, items 1-3):
whole journeys through the hosted pages, the JSON API and the local Google (oidc-provider) and
GitHub stand-ins."""

from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Identity, User
from tests.support import providers as fixtures
from tests.support.accounts import OWNED, PASSWORD, signed_in_now
from tests.support.http import bearer
from tests.support.oauth import (
    OUR_CALLBACK,
    exchange,
    landing,
    provider_settings,
    sign_in,
)
from tests.support.pages import open_mailed_link, submit
from tests.support.settings import change_settings

pytestmark = pytest.mark.app_settings("oauth")

oidc_server = fixtures.oidc_server
oidc_server_clean = fixtures.oidc_server_clean
github_server_session = fixtures.github_server_session
github_server = fixtures.github_server


@pytest.fixture
def settings(oidc_server_clean, github_server):
    return provider_settings(oidc_server_clean, github_server)


VICTIM = "victim@example.com"
ATTACKER_PASSWORD = "mallory's own passphrase"


def through_provider(client, start_path):
    """Start at `start_path`, pass the provider, come back: our callback's answer."""
    start = client.get(start_path)
    assert start.status_code == 302, start.get_data(as_text=True)
    provider = "google" if "google" in start_path else "github"
    back = urlsplit(fixtures.follow_authorization(start.headers["Location"],
                                                  OUR_CALLBACK.format(provider)))
    return client.get(f"{back.path}?{back.query}")


def github_verified(github_server, email, id=9001):  # noqa: A002 (GitHub's name)
    github_server.next_login(id=id, login="someone", name="Some One", emails=[
        {"email": email, "primary": True, "verified": True, "visibility": "public"}])


def api_login(client, email, password):
    return client.post("/api/v2/auth/login", json={"email": email, "password": password})


def user_row(app, email):
    with app.app_context():
        found = db.session.scalars(select(User).where(User.email == email)).one_or_none()
        db.session.expunge_all()
        return found


def linked(app, user_id):
    with app.app_context():
        return sorted(db.session.scalars(
            select(Identity.provider).where(Identity.user_id == user_id)))


def hosted_signup(client, email, password=ATTACKER_PASSWORD):
    return submit(client, "/signup", {"email": email, "password": password, "full_name": "M"})


# 1. Pre-registered accounts --------------------------------------------------------------------

def test_a_pre_registered_account_cannot_link_the_attackers_github(app, client, github_server):
    """Mallory signs up with the victim's address (never confirmed) and tries to link her own
    GitHub from the account page, to keep a way in once the owner takes the address back."""
    assert hosted_signup(client, VICTIM).status_code == 302  # signed in, unconfirmed
    github_verified(github_server, "mallory@evil.example")
    response = submit(client, "/account/link/github", {}, token_from="/account")
    assert response.status_code == 302
    assert response.headers["Location"] == "/account?error=confirm_email_first"
    assert github_server.last_authorize is None  # never sent to GitHub
    assert "Confirm your email address before linking" in client.get(
        "/account?error=confirm_email_first").text
    assert linked(app, user_row(app, VICTIM).id) == []


def test_the_rule_holds_where_the_identity_is_written(app, make_user):
    """Not only the button: the domain refuses a link to an unconfirmed account, whatever
    started it (a link begun in another tab before, a future caller)."""
    from app.domain.accounts import identities
    from app.domain.accounts.errors import AccountEmailNotVerified
    from app.domain.accounts.providers import Profile
    from app.domain.audit import ClientInfo

    mallory = make_user(VICTIM, email_verified=False)
    with app.app_context(), pytest.raises(AccountEmailNotVerified):
        mallory_row = db.session.get(User, mallory.id)
        identities.link(mallory_row, signed_in_now(mallory_row),
                        Profile("github", "9001", "mallory@evil.example", True, "M"),
                        ClientInfo())
    assert linked(app, mallory.id) == []


def test_a_reset_unlinks_what_was_linked_before_it(app, client, github_server, mailbox,
                                                   make_user):
    """Whoever linked a provider may not be the address's owner: taking the address back with a
    reset must close that door, as it ends every session."""
    victim = make_user(VICTIM, email_verified=True)
    with app.app_context():
        from app.domain.accounts import identities
        from app.domain.accounts.providers import Profile
        from app.domain.audit import ClientInfo

        victim_row = db.session.get(User, victim.id)
        identities.link(victim_row, signed_in_now(victim_row),
                        Profile("github", "9001", "mallory@evil.example", True, "M"),
                        ClientInfo())
    assert submit(client, "/forgot-password", {"email": VICTIM}).status_code == 202
    link = mailbox.last_link(VICTIM, "/reset-password")
    client.get(link[link.index("/reset-password"):])
    assert submit(client, "/reset-password", {"new_password": "the owner's new passphrase"},
                  token_from="/reset-password").status_code == 200
    assert linked(app, victim.id) == []
    notice = mailbox.to(VICTIM)[-1].get_body(("plain",)).get_content()
    assert "GitHub was also unlinked" in notice
    # Mallory's GitHub now signs in to an account of its own, never the victim's.
    github_verified(github_server, "mallory@evil.example")
    location = sign_in(client, "github")
    body = exchange(client, landing(location)[1]["code"], "github").get_json()
    assert body["user"]["id"] != victim.id and body["user"]["email"] == "mallory@evil.example"


def test_confirmed_later_the_attackers_password_does_not_survive_the_owners_google_sign_in(
        app, client, clock, mailbox, oidc_server_clean):
    """Mallory signs up with a password and keeps her refresh token; the victim confirms the
    mail she received and later signs in with Google. No silent link: the victim is asked for
    the password, does not know it, continues with Google alone, and Mallory is out."""
    signup = client.post("/api/v2/auth/signup", json={"email": VICTIM,
                                                      "password": ATTACKER_PASSWORD})
    mallory_refresh = signup.get_json()["refresh_token"]
    clock.advance(3600)  # the victim opens the mail later
    confirm = mailbox.last_link(VICTIM, "/confirm-email")
    assert open_mailed_link(client, confirm).status_code == 200

    oidc_server_clean.next_login(sub="victim-google", email=VICTIM, email_verified=True,
                                 name="Victim")
    victim = app.test_client()
    answer = through_provider(victim, "/login/google")
    assert answer.headers["Location"] == "/login/link"
    page = victim.get("/login/link")
    assert VICTIM in page.text and "Continue with Google alone" in page.text
    assert linked(app, user_row(app, VICTIM).id) == []  # nothing linked before a choice

    taken = submit(victim, "/login/link/take-over", {}, token_from="/login/link")
    assert taken.status_code == 302 and taken.headers["Location"] == "/account"
    assert victim.get("/account").status_code == 200
    assert api_login(client, VICTIM, ATTACKER_PASSWORD).status_code == 401
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": mallory_refresh}).status_code == 401
    owner = user_row(app, VICTIM)
    assert owner.password_hash is None and linked(app, owner.id) == ["google"]
    assert "password was removed" in mailbox.to(VICTIM)[-1].get_body(("plain",)).get_content()


def test_a_password_changed_after_the_owners_confirmation_is_still_the_attackers(
        app, client, clock, mailbox, oidc_server_clean):
    """Mallory changes her password once the victim has confirmed: "set after the address was
    proved" is no proof that the address's holder set it. Google still asks, links nothing."""
    assert submit(client, "/signup", {"email": VICTIM, "password": ATTACKER_PASSWORD}
                  ).status_code == 302
    clock.advance(3600)
    confirm = mailbox.last_link(VICTIM, "/confirm-email")
    assert open_mailed_link(app.test_client(), confirm).status_code == 200
    clock.advance(60)
    changed = submit(client, "/account/password", {
        "current_password": ATTACKER_PASSWORD, "new_password": "mallory's second passphrase"},
        token_from="/account")
    assert changed.status_code == 302 and changed.headers["Location"] == "/account"
    assert user_row(app, VICTIM).password_changed_at > user_row(app, VICTIM).email_verified_at
    oidc_server_clean.next_login(sub="victim-google", email=VICTIM, email_verified=True)
    answer = through_provider(app.test_client(), "/login/google")
    assert answer.headers["Location"] == "/login/link"
    assert linked(app, user_row(app, VICTIM).id) == []


def test_the_owner_of_the_password_links_google_by_proving_it(app, client, make_user,
                                                              mailbox, oidc_server_clean):
    """The ordinary case: signed up with a password, confirmed the address afterwards, signs in
    with Google for the first time. The password proves the account; it keeps working."""
    owner = make_user(VICTIM, email_verified=True)  # proved, but not after the password
    oidc_server_clean.next_login(sub="owner-google", email=VICTIM, email_verified=True)
    assert through_provider(client, "/login/google").headers["Location"] == "/login/link"
    wrong = submit(client, "/login/link", {"password": "not the password"})
    assert wrong.status_code == 401 and "The password is not right." in wrong.text
    assert linked(app, owner.id) == []
    right = submit(client, "/login/link", {"password": PASSWORD})
    assert right.status_code == 302 and right.headers["Location"] == "/account"
    assert linked(app, owner.id) == ["google"]
    assert api_login(client, VICTIM, PASSWORD).status_code == 200
    assert "Google was linked" in mailbox.to(VICTIM)[-1].get_body(("plain",)).get_content()
    # The proof page is used once: it is gone after the link.
    assert client.get("/login/link").status_code == 400


def test_after_a_reset_the_password_is_the_address_holders_and_google_links_unasked(
        app, client, clock, make_user, mailbox, oidc_server_clean):
    owner = make_user(VICTIM, email_verified=True)  # proved, but not after the password
    submit(client, "/forgot-password", {"email": VICTIM})
    link = mailbox.last_link(VICTIM, "/reset-password")
    client.get(link[link.index("/reset-password"):])
    submit(client, "/reset-password", {"new_password": "the owner's new passphrase"},
           token_from="/reset-password")
    clock.advance(60)
    oidc_server_clean.next_login(sub="owner-google", email=VICTIM, email_verified=True)
    assert through_provider(client, "/login/google").headers["Location"] == "/account"
    assert linked(app, owner.id) == ["google"]


def test_a_client_sites_provider_sign_in_also_stops_for_the_proof(app, client, make_user,
                                                                  oidc_server_clean):
    """The API's redirect flow (a client site's button) asks the same question, then hands the
    site its code."""
    owner = make_user(VICTIM, email_verified=True)
    oidc_server_clean.next_login(sub="owner-google", email=VICTIM, email_verified=True)
    assert sign_in(client, "google") == "/login/link"
    proved = submit(client, "/login/link", {"password": PASSWORD})
    target, params = landing(proved.headers["Location"])
    assert target.startswith("https://symbols.example") and params["state"] == "site-state"
    body = exchange(client, params["code"], "google").get_json()
    assert body["user"]["id"] == owner.id


def test_a_proof_page_needs_a_pending_sign_in(client):
    assert client.get("/login/link").status_code == 400
    assert submit(client, "/login/link", {"password": "x"}, token_from="/login").status_code \
        == 400


def test_both_proof_forms_need_the_csrf_token(app, client, make_user, oidc_server_clean):
    """With a pending link in the browser, a forged POST (no CSRF token) links nothing, removes
    no password and ends no session."""
    owner = make_user(VICTIM, email_verified=True)
    oidc_server_clean.next_login(sub="csrf-google", email=VICTIM, email_verified=True)
    assert through_provider(client, "/login/google").headers["Location"] == "/login/link"
    assert client.post("/login/link", data={"password": PASSWORD}).status_code == 400
    assert client.post("/login/link/take-over").status_code == 400
    assert linked(app, owner.id) == []
    assert user_row(app, VICTIM).password_hash is not None
    assert api_login(client, VICTIM, PASSWORD).status_code == 200


def test_linking_and_unlinking_mail_the_owner(app, client, make_user, mailbox, login):

    owner = make_user(VICTIM, **OWNED)
    with app.app_context():
        from app.domain.accounts import identities
        from app.domain.accounts.providers import Profile
        from app.domain.audit import ClientInfo

        identities.account_for(Profile("google", "g-7", VICTIM, True, "V"), ClientInfo())
    subjects = [m["Subject"] for m in mailbox.to(VICTIM)]
    assert "Google was linked to your account" in subjects
    auth = bearer(login(owner)["access_token"])
    assert client.delete("/api/v2/auth/providers/google", headers=auth).status_code == 204
    last = mailbox.to(VICTIM)[-1]
    assert last["Subject"] == "Google was unlinked from your account"
    assert f"Account: {VICTIM}" in last.get_body(("plain",)).get_content()


# 2. "The same email" ---------------------------------------------------------------------------

STRASSE, STRASSE_LOOKALIKE = "ada@strasse.de", "ada@straße.de"


def test_a_github_address_at_a_look_alike_domain_is_someone_else(app, client, github_server,
                                                                 make_user):
    """`straße.de` is a different domain that anyone can register: its verified address is not
    the account of `strasse.de`, however freely that account would link."""

    victim = make_user(STRASSE, **OWNED)
    github_verified(github_server, STRASSE_LOOKALIKE)
    body = exchange(client, landing(sign_in(client, "github"))[1]["code"], "github").get_json()
    assert body["user"]["id"] != victim.id
    assert body["user"]["email"] == "ada@xn--strae-oqa.de"  # shown as stored: the real domain
    assert linked(app, victim.id) == []


def test_signing_up_one_address_does_not_block_the_other(client):
    def signup(email):
        return client.post("/api/v2/auth/signup", json={"email": email, "password": PASSWORD})

    assert signup(STRASSE).status_code == 201
    assert signup(STRASSE_LOOKALIKE).status_code == 201
    assert signup("straße@example.com").status_code == 201
    assert signup("strasse@example.com").status_code == 201
    assert signup("ADA@Strasse.DE").status_code == 409  # ASCII case still does not count


def test_a_reset_for_one_address_is_never_mailed_to_the_other(client, make_user, mailbox):
    make_user(STRASSE)
    client.post("/api/v2/auth/forgot-password", json={"email": STRASSE_LOOKALIKE})
    client.post("/api/v2/auth/forgot-password", json={"email": "straSSe@strasse.de"})
    assert mailbox.messages == []
    client.post("/api/v2/auth/forgot-password", json={"email": "Ada@STRASSE.de"})
    assert [m["To"] for m in mailbox.messages] == [STRASSE]


def test_the_account_page_shows_the_address_exactly_as_stored(client):
    submit(client, "/signup", {"email": STRASSE_LOOKALIKE, "password": PASSWORD})
    page = client.get("/account").text
    assert "ada@xn--strae-oqa.de" in page


# 10. Provider data is input --------------------------------------------------------------------

HOSTILE_NAME = "Mal\x00lory\x1b[31m\r\nSet-Cookie: x=1 \u202eredli\u2066"


def test_a_providers_hostile_name_is_cleaned_before_it_is_stored(app, client, github_server):
    """On PostgreSQL a NUL made the callback a 500; CR/LF, ESC and bidi overrides were stored."""
    github_server.next_login(id=31337, name=HOSTILE_NAME, emails=[
        {"email": "mallory@evil.example", "primary": True, "verified": True,
         "visibility": "public"}])
    body = exchange(client, landing(sign_in(client, "github"))[1]["code"], "github").get_json()
    assert body["user"]["full_name"] == "Mal lory [31m Set-Cookie: x=1 redli"


def test_a_providers_hostile_email_is_no_email(app, client, github_server, make_user):

    make_user("victim@example.com", **OWNED)
    for hostile in ("victim@example.com\u202e", "victim@example.com\x00",
                    "victim@example.com\r\nBcc: x@evil.example"):
        github_server.next_login(id=31338, emails=[
            {"email": hostile, "primary": True, "verified": True, "visibility": "public"}])
        assert landing(sign_in(client, "github"))[1]["error"] == "email_not_verified"
    with app.app_context():
        assert db.session.scalars(select(Identity)).all() == []


def test_a_google_name_with_control_characters_is_cleaned(client, oidc_server_clean):
    oidc_server_clean.next_login(sub="g-hostile", email="new@example.com", email_verified=True,
                                 name="New\x00 Person\u202e")
    body = exchange(client, landing(sign_in(client, "google"))[1]["code"], "google").get_json()
    assert body["user"]["full_name"] == "New Person"


def test_guessing_the_password_on_the_link_page_is_throttled_like_a_sign_in(
        app, client, make_user, oidc_server_clean):
    """The proof page is a password form: its guesses count against the account's sign-in
    limits (the database counters), and the right password waits like any other."""
    make_user(VICTIM, email_verified=True)
    # The database counters only (flask-limiter was off).
    change_settings(app, RATELIMIT_ENABLED=True)
    oidc_server_clean.next_login(sub="guesser", email=VICTIM, email_verified=True)
    assert through_provider(client, "/login/google").headers["Location"] == "/login/link"
    statuses = [submit(client, "/login/link", {"password": f"guess {n}"}).status_code
                for n in range(7)]
    assert statuses[:5] == [401] * 5 and statuses[-1] == 429
    refused = submit(client, "/login/link", {"password": PASSWORD})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    # The same email from the same address waits on the API as well: one set of counters.
    api = client.post("/api/v2/auth/login", json={"email": VICTIM, "password": "guess 8"})
    assert api.status_code == 429
