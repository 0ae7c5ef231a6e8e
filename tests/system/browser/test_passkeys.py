"""Passkeys on the hosted pages, as a person uses them: Chromium's virtual authenticator (the
DevTools protocol's WebAuthn domain) standing in for a fingerprint reader, against a real server.

WebAuthn refuses an IP address as relying-party id, so these tests run a server of their own
(`passkey_site`, for the module) that the browser reaches at http://localhost:PORT, which is also
its SVC_PUBLIC_URL: the relying party is "localhost", and http://localhost is a secure context.

A virtual authenticator belongs to the page it was added to (its CDP session's target): another
page, or another context (a fresh "device" with no cookies), gets one of its own, and a copy of
the credential (`WebAuthn.getCredentials`, then `WebAuthn.addCredential`).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from playwright.sync_api import Locator, Page, Response, expect

from tests.support.accounts import PASSWORD
from tests.support.browser import (
    GENEROUS_LIMITS,
    ClientSites,
    ContextFactory,
    Site,
    client_sites_setting,
    exchange,
    read_mail,
    sign_in_with_form,
    signed_in_and_confirmed,
    wait_for_callback,
)
from tests.support.browser import user_id_of as _user_id
from tests.support.http import status_of
from tests.support.providers import OidcServer
from tests.support.server import GunicornError, flask_cli, service_environment, start_gunicorn
from tests.support.servers import free_port
from tests.support.soft_authenticator import unb64url
from tests.support.sqlite_server import Server
from tests.system.browser.test_accessibility import (
    PHONE,
    check_at_both_widths,
    check_security_headers,
)

pytestmark = pytest.mark.e2e

# What a laptop's fingerprint reader is: a platform authenticator that keeps discoverable
# credentials and verifies its user; presence is "touched" without anyone there.
AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                 "hasUserVerification": True, "isUserVerified": True,
                 "automaticPresenceSimulation": True}

# What the pages say.
NO_PASSKEY_USED = "No passkey was used. Try again, or sign in another way."  # static/passkeys.js
REFUSED = "That passkey could not sign you in. Try again, or sign in another way."
REMOVED = "That passkey is not one of this service's (it may have been removed)."

NO_AUTOFILL = """if (window.PublicKeyCredential) {
    PublicKeyCredential.isConditionalMediationAvailable = async () => false;
}"""

# A page of another origin relaying this service's challenge: the sign-in options the service's
# login page fetches (as static/passkeys.js does), the ceremony run on whatever page evaluates
# it, and its answer handed to the login page's form, as the script would.
FETCH_SIGN_IN_OPTIONS = """async () => {
    const form = document.querySelector("form[data-passkey=sign-in]");
    const answer = await fetch(form.dataset.options, {
        method: "POST", headers: {"X-CSRFToken": form.elements.csrf_token.value}});
    return await answer.json();
}"""
CEREMONY = """async (options) => {
    const credential = await navigator.credentials.get(
        {publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
    return JSON.stringify(credential.toJSON());
}"""
SUBMIT_ANSWER = """(answer) => {
    const form = document.querySelector("form[data-passkey=sign-in]");
    form.elements.credential.value = answer;
    form.submit();
}"""


# -- the server, at http://localhost:PORT ---------------------------------------------------------


def _start_at_localhost(workdir: Path, env: dict[str, str]) -> Server:
    """tests/support/sqlite_server.py's start_server (a freshly migrated SQLite file, a traced
    worker), for a server whose SVC_PUBLIC_URL is http://localhost:PORT and that listens there:
    start_gunicorn binds a port of its own choosing on 127.0.0.1 (where it waits for /health),
    so PORT, chosen first, is a second --bind; the browser only ever uses PORT. (/etc/hosts and
    Chromium both take localhost to 127.0.0.1 here.)"""
    for attempt in range(3):
        port = free_port()
        public_url = f"http://localhost:{port}"
        instance = workdir / f"instance-{attempt}"
        instance.mkdir(parents=True)
        database = instance / "svc-auth.db"
        environment = service_environment(instance, {"SVC_DATABASE_URL": f"sqlite:///{database}",
                                                     "SVC_PUBLIC_URL": public_url, **env})
        migrated = flask_cli({**environment, "SVC_INSTANCE_PATH": str(workdir / "migrate")},
                             "db", "upgrade")
        assert migrated.returncode == 0, migrated.stderr
        try:
            server = start_gunicorn(
                workdir, environment, name=f"gunicorn-{attempt}", workers=1,
                options=["--worker-class", "sync", "--timeout", "60", "--graceful-timeout", "5",
                         "--no-control-socket", "--bind", f"127.0.0.1:{port}"],
                traced=True, kind=Server, instance_path=instance, database=database)
        except GunicornError as error:
            if "Address already in use" in str(error) and attempt < 2:
                continue  # PORT was taken between choosing and binding it
            raise
        server.base_url = public_url
        assert status_of(server.url("/health"), timeout=5) == 200, server.log()
        return server
    raise AssertionError("unreachable")


@pytest.fixture(scope="module")
def passkey_site() -> Iterator[Site]:
    """One server for the module, with the client sites (`symbols`, `footprints`) and a mail
    folder, like conftest.py's `site`; no Google stand-in (nothing here signs in with Google).
    Passkey ceremonies have their own rate limit: generous here too."""
    workdir = Path(tempfile.mkdtemp(prefix="svc-browser-passkeys-"))
    mail_dir = workdir / "mail"
    mail_dir.mkdir()
    clients = ClientSites()
    server: Server | None = None
    try:
        server = _start_at_localhost(workdir / "server", {
            "SVC_CLIENT_SITES": client_sites_setting(clients),
            "SVC_MAIL_URL": f"file://{mail_dir}",
            "SVC_MAIL_RETRY_DELAY": "0.1",
            **GENEROUS_LIMITS,
            "SVC_LIMIT_PASSKEY_OPTIONS": "1000 per minute",
        })
        yield Site(server, clients, cast(OidcServer, None), mail_dir)
    finally:
        if server is not None:
            server.stop()
        clients.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# -- the authenticator ----------------------------------------------------------------------------


class Authenticator:
    """A virtual authenticator of one page, through its navigations."""

    def __init__(self, page: Page, *credentials: dict[str, Any]) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("WebAuthn.enable", {"enableUI": False})
        self.id = self.cdp.send("WebAuthn.addVirtualAuthenticator",
                                {"options": AUTHENTICATOR})["authenticatorId"]
        for credential in credentials:
            self.add(credential)

    def credentials(self) -> list[dict[str, Any]]:
        return list(self.cdp.send("WebAuthn.getCredentials",
                                  {"authenticatorId": self.id})["credentials"])

    def only_credential(self) -> dict[str, Any]:
        held = self.credentials()
        assert len(held) == 1, held
        return held[0]

    def add(self, credential: dict[str, Any]) -> None:
        self.cdp.send("WebAuthn.addCredential",
                      {"authenticatorId": self.id, "credential": credential})


def _foreign_credential(rp_id: str) -> dict[str, Any]:
    """A discoverable credential made for another site: a fresh P-256 key, as PKCS#8."""
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    return {"credentialId": base64.b64encode(b"elsewhere-" + rp_id.encode()).decode(),
            "isResidentCredential": True, "rpId": rp_id,
            "privateKey": base64.b64encode(pkcs8).decode(),
            "userHandle": base64.b64encode(b"someone-at-" + rp_id.encode()).decode(),
            "signCount": 0}


# -- journeys' steps ------------------------------------------------------------------------------


def _passkeys_of(site: Site, email: str) -> list[tuple[Any, ...]]:
    """(name, sign_count, last_used_at) of each of the account's passkeys, from the database."""
    return site.server.query(
        "SELECT name, sign_count, last_used_at FROM passkeys WHERE user_id = ? ORDER BY created_at",
        _user_id(site, email))


def _newest_session(site: Site, email: str) -> tuple[str, str | None]:
    """(provider, second_factor) of the account's newest live session."""
    rows = site.server.query(
        "SELECT provider, second_factor FROM sessions WHERE user_id = ? AND revoked_at IS NULL"
        " ORDER BY created_at DESC LIMIT 1", _user_id(site, email))
    assert rows, f"no live session of {email}"
    return rows[0][0], rows[0][1]


def _passkeys_section(page: Page) -> Locator:
    return page.locator("section", has=page.get_by_role("heading", name="Passkeys", exact=True))


def _add_first_passkey(page: Page, site: Site, name: str) -> None:
    """From the account page: name it, add it, see the recovery codes, back to the account."""
    section = _passkeys_section(page)
    section.get_by_label("Name it").fill(name)
    section.get_by_role("button", name="Add a passkey").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    expect(page.get_by_text("Your passkey is added")).to_be_visible()
    expect(page.locator("ul.recovery-codes li code")).to_have_count(10)
    page.get_by_role("link", name="I have saved them").click()
    expect(page).to_have_url(site.url("/account"))


def _account_with_passkey(new_context: ContextFactory, site: Site, label: str,
                          **options: Any) -> tuple[str, Page, Authenticator]:
    """An account with one passkey, "Work laptop", added from a page that stays signed in."""
    page, authenticator = _device_with(new_context, **options)
    email = signed_in_and_confirmed(page, site, label)
    _add_first_passkey(page, site, "Work laptop")
    return email, page, authenticator


def _without_autofill(page: Page) -> Page:
    """The login page also asks for a passkey in the background, for the email field's
    suggestions (conditional mediation). Chromium's virtual authenticator answers that request
    at once, as if the person had picked the suggestion on loading the page (and refuses it at
    once when it holds no passkey for the site): a browser without that feature, so that the
    buttons are what the journey uses. `test_the_login_page_offers_the_passkey_in_autofill`
    is the journey through the suggestions."""
    page.add_init_script(NO_AUTOFILL)
    return page


def _device_with(new_context: ContextFactory, *credentials: dict[str, Any],
                 autofill: bool = False, **options: Any) -> tuple[Page, Authenticator]:
    """Another browser (no cookies) whose authenticator holds `credentials`."""
    page = new_context(**options).new_page()
    if not autofill:
        _without_autofill(page)
    return page, Authenticator(page, *credentials)


def _expect_signed_out(page: Page, site: Site) -> None:
    page.goto(site.url("/account"))
    expect(page).to_have_url(site.url("/login"))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


# -- registering ----------------------------------------------------------------------------------


def test_add_a_passkey_from_the_account_page(new_context: ContextFactory, passkey_site: Site):
    """Named on the account page after a fresh sign-in: the first factor brings the recovery
    codes; the passkey is listed, unused; the authenticator holds a discoverable credential for
    "localhost" whose user handle is the account's id; the owner gets a mail."""
    site = passkey_site
    page, authenticator = _device_with(new_context)
    email = signed_in_and_confirmed(page, site, "passkey-add")
    section = _passkeys_section(page)
    expect(section.get_by_role("button", name="Add a passkey")).to_be_visible()  # script ran
    expect(section.locator("ul.rows li")).to_have_count(0)

    _add_first_passkey(page, site, "Work laptop")

    rows = _passkeys_section(page).locator("ul.rows li")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Work laptop")
    expect(rows.first).to_contain_text("this device only")
    expect(rows.first).to_contain_text("not used yet")
    expect(rows.first.get_by_role("button", name="Remove Work laptop")).to_be_visible()
    expect(page.get_by_text("Your passkeys are your second step. Recovery codes left: 10")) \
        .to_be_visible()

    held = authenticator.only_credential()
    assert held["rpId"] == "localhost"
    assert held["isResidentCredential"] is True
    assert base64.b64decode(held["userHandle"]).decode() == _user_id(site, email)
    assert [(name, last_used) for name, _, last_used in _passkeys_of(site, email)] \
        == [("Work laptop", None)]
    # The owner is told, naming the passkey.
    told = read_mail(site, email, "A second factor was added to your account")
    body = told.get_body(("plain",))
    assert body is not None and "Work laptop" in body.get_content()


# -- signing in with the passkey alone ------------------------------------------------------------


def test_sign_in_with_the_passkey_alone(new_context: ContextFactory, passkey_site: Site):
    """No email, no password: the passkey signs in alone (two factors in one gesture), on the
    service and from a client site; a copy whose counter is behind (a clone) is refused."""
    site = passkey_site
    email, _, authenticator = _account_with_passkey(new_context, site, "passkey-alone")
    registered = authenticator.only_credential()

    # Another browser, no cookies, the same passkey: no email, no password, one click.
    other, other_authenticator = _device_with(new_context, registered)
    other.goto(site.url("/login"))
    other.get_by_role("button", name="Sign in with a passkey").click()
    expect(other).to_have_url(site.url("/account"))
    expect(other.get_by_role("heading", name="Your account", exact=True)).to_be_visible()
    expect(other.locator(".address").first).to_have_text(email)
    row = _passkeys_section(other).locator("ul.rows li")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(
        re.compile(r"last used \w{3} \d{1,2}, \d{4}, \d{1,2}:\d\d:\d\d\s[AP]M UTC"))
    expect(row).not_to_contain_text("not used yet")
    # Two factors in one gesture: the session says so, and the counter moved on.
    assert _newest_session(site, email) == ("passkey", "passkey")
    [(_, sign_count, last_used)] = _passkeys_of(site, email)
    assert last_used is not None
    used = other_authenticator.only_credential()["signCount"]
    assert sign_count == used > registered["signCount"]

    # From a client site: back there with a code that exchanges for this account.
    third, _ = _device_with(new_context, other_authenticator.only_credential())
    third.goto(site.url("/login?callback=symbols"))
    third.get_by_role("button", name="Sign in with a passkey").click()
    back = wait_for_callback(third, site.symbols_cb)
    assert back["provider"] == "passkey"
    answer = exchange(site, back["code"], "passkey")
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email

    # A copy taken before those sign-ins (a cloned key: its counter is behind) is refused.
    clone, _ = _device_with(new_context, registered)
    clone.goto(site.url("/login"))
    clone.get_by_role("button", name="Sign in with a passkey").click()
    expect(clone.get_by_role("alert")).to_contain_text(REFUSED)
    _expect_signed_out(clone, site)


def test_the_login_page_offers_the_passkey_in_autofill(new_context: ContextFactory,
                                                       passkey_site: Site):
    """The background request for the email field's suggestions (conditional mediation):
    Chromium's virtual authenticator picks the suggestion itself, so loading the page is the
    whole journey; it ends back at the client site, signed in with the passkey."""
    site = passkey_site
    email, _, authenticator = _account_with_passkey(new_context, site, "passkey-autofill")
    other, _ = _device_with(new_context, authenticator.only_credential(), autofill=True)
    other.goto(site.url("/login?callback=symbols"))
    back = wait_for_callback(other, site.symbols_cb)
    assert back["provider"] == "passkey"
    answer = exchange(site, back["code"], "passkey")
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email


def test_the_login_page_says_nothing_of_passkeys_unasked(page: Page, passkey_site: Site):
    """The background (autofill) request is the browser's business until the person picks a
    suggestion: when it fails (here its options are refused, as a 429 would), the login page
    shows no error of it; a click on the button then says why."""
    page.route("**/login/passkey/options", lambda route: route.fulfill(
        status=429, content_type="application/json", body='{"error": "Too many attempts."}'))
    with page.expect_response(lambda r: r.url.endswith("/login/passkey/options")):
        page.goto(passkey_site.url("/login"))
    page.wait_for_timeout(200)  # the script has done whatever it does with the refusal
    alerts = page.get_by_role("alert")
    assert alerts.count() == 0, alerts.all_inner_texts()
    assert page.locator("[data-passkey-message]").is_hidden()
    page.get_by_role("button", name="Sign in with a passkey").click()  # asked: now it says why
    expect(page.locator("[data-passkey-message]")).to_have_text("Too many attempts.")


# -- the second step ------------------------------------------------------------------------------


def test_a_passkey_as_the_second_step_after_the_password(new_context: ContextFactory,
                                                         passkey_site: Site):
    """The password, then "Use a passkey" in place of a code."""
    site = passkey_site
    email, _, authenticator = _account_with_passkey(new_context, site, "passkey-second")
    other, _ = _device_with(new_context, authenticator.only_credential())
    other.goto(site.url("/login"))
    sign_in_with_form(other, email, PASSWORD)

    expect(other).to_have_url(re.compile(r"/login/second-factor"))
    expect(other.get_by_role("heading", name="Finish signing in")).to_be_visible()
    expect(other.get_by_text("Or use one of your passkeys.")).to_be_visible()
    other.get_by_role("button", name="Use a passkey").click()

    expect(other).to_have_url(site.url("/account"))
    expect(other.get_by_role("heading", name="Your account", exact=True)).to_be_visible()
    assert _newest_session(site, email) == ("password", "passkey")
    expect(_passkeys_section(other).locator("ul.rows li")).to_contain_text("last used")


# -- removing -------------------------------------------------------------------------------------


def test_a_removed_passkey_no_longer_signs_in(new_context: ContextFactory, passkey_site: Site):
    """Removed from the account page (recent sign-in: no code asked), it is gone from the list
    and the database; the authenticator still offers it, and the service refuses it."""
    site = passkey_site
    email, page, authenticator = _account_with_passkey(new_context, site, "passkey-remove")

    # Just signed in with the password: no code asked.
    row = _passkeys_section(page).locator("ul.rows li")
    expect(row.get_by_label(re.compile("recovery code"))).to_have_count(0)
    row.get_by_role("button", name="Remove Work laptop").click()
    expect(page).to_have_url(site.url("/account#passkeys"))
    expect(page.get_by_text("Passkey “Work laptop” removed.")).to_be_visible()
    expect(_passkeys_section(page).locator("ul.rows li")).to_have_count(0)
    expect(page.get_by_text("Your passkeys are your second step")).to_have_count(0)
    assert _passkeys_of(site, email) == []
    read_mail(site, email, "A second factor was removed from your account")

    # Signed out, the same browser and authenticator (which still holds the passkey) try it.
    page.locator("header").get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(site.url("/login"))
    used_before = authenticator.only_credential()["signCount"]
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.get_by_role("alert")).to_contain_text(REMOVED)
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    # The browser did answer with it: the service refused.
    assert authenticator.only_credential()["signCount"] > used_before
    _expect_signed_out(page, site)


# -- passkeys of other sites, answers made elsewhere ----------------------------------------------


def test_a_passkey_of_another_site_is_not_offered(new_context: ContextFactory,
                                                  passkey_site: Site):
    """The authenticator holds a passkey for example.com only: Chromium uses nothing for
    "localhost", the script says so, and the person stays signed out on the login page."""
    site = passkey_site
    page, authenticator = _device_with(new_context, _foreign_credential("example.com"))
    page.goto(site.url("/login"))
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.locator("[data-passkey-message]")).to_have_text(NO_PASSKEY_USED)
    expect(page).to_have_url(site.url("/login"))
    assert authenticator.only_credential()["signCount"] == 0  # never used
    _expect_signed_out(page, site)


def test_an_answer_made_on_another_origin_is_refused(new_context: ContextFactory,
                                                     passkey_site: Site):
    """Another origin of the same relying-party id (http://localhost:OTHER, the client sites'
    server) runs the ceremony for a challenge of the service's login page, with the account's
    real passkey, and relays the answer: refused, as its clientDataJSON names that origin. The
    same relay from a page of the service's own origin signs in: only the origin differs."""
    site = passkey_site
    email, _, authenticator = _account_with_passkey(new_context, site, "passkey-origin")
    login = _without_autofill(new_context().new_page())
    login.goto(site.url("/login"))

    elsewhere = login.context.new_page()
    elsewhere_authenticator = Authenticator(elsewhere, authenticator.only_credential())
    other_origin = site.clients.origin.replace("127.0.0.1", "localhost")
    elsewhere.goto(other_origin + "/relay")
    answer = elsewhere.evaluate(CEREMONY, login.evaluate(FETCH_SIGN_IN_OPTIONS))
    client_data = json.loads(unb64url(json.loads(answer)["response"]["clientDataJSON"]))
    assert client_data["origin"] == other_origin
    with login.expect_navigation():
        login.evaluate(SUBMIT_ANSWER, answer)
    expect(login.get_by_role("alert")).to_contain_text(REFUSED)
    assert [last_used for _, _, last_used in _passkeys_of(site, email)] == [None]  # not a use
    _expect_signed_out(login, site)

    here = login.context.new_page()
    Authenticator(here, elsewhere_authenticator.only_credential())
    here.goto(site.url("/forgot-password"))  # the service's origin; no passkey script there
    answer = here.evaluate(CEREMONY, login.evaluate(FETCH_SIGN_IN_OPTIONS))
    with login.expect_navigation():
        login.evaluate(SUBMIT_ANSWER, answer)
    expect(login).to_have_url(site.url("/account"))
    assert _newest_session(site, email) == ("passkey", "passkey")


# -- accessibility --------------------------------------------------------------------------------


Load = Callable[[], Response | None]
Reach = Callable[[ContextFactory, Site], tuple[Page, Load]]


def _reach_account(new_context: ContextFactory, site: Site) -> tuple[Page, Load]:
    _, page, _ = _account_with_passkey(new_context, site, "a11y-passkey-account",
                                       viewport=PHONE)
    return page, lambda: page.goto(site.url("/account"))


def _reach_second_step(new_context: ContextFactory, site: Site) -> tuple[Page, Load]:
    email, _, authenticator = _account_with_passkey(new_context, site, "a11y-passkey-second")
    page, _ = _device_with(new_context, authenticator.only_credential(), viewport=PHONE)
    page.goto(site.url("/login?callback=symbols"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(re.compile(r".*/login/second-factor\?redirect_uri="))
    second_step_url = page.url
    return page, lambda: page.goto(second_step_url)


@pytest.mark.parametrize(("name", "reach", "shown"), [
    pytest.param("account-with-passkey", _reach_account, "Remove Work laptop",
                 id="account-with-passkey"),
    pytest.param("second-step-passkey", _reach_second_step, "Use a passkey",
                 id="second-step-passkey"),
])
def test_passkey_pages_are_accessible_and_fit(name: str, reach: Reach, shown: str,
                                              new_context: ContextFactory, passkey_site: Site,
                                              axe_source: str):
    """As test_accessibility.py does for every page: axe-core at 360 and 1280 px, screenshots
    in build/screenshots/<page>-<width>.png, the headers, nothing from another origin."""
    site = passkey_site
    page, load = reach(new_context, site)
    loaded: list[str] = []
    page.on("request", lambda sent: loaded.append(sent.url))
    response = load()
    page.wait_for_load_state("load")
    assert response is not None and response.status == 200, response
    check_security_headers(response, own_script=True)
    expect(page.get_by_role("button", name=shown)).to_be_visible()  # the script has run
    foreign = [url for url in loaded if not url.startswith(site.base_url + "/")]
    assert not foreign, f"requests to another origin: {foreign}"
    assert [url for url in loaded if url.endswith(".css")] == [site.url("/static/svc.css")]
    assert site.url("/static/passkeys.js") in loaded
    check_at_both_widths(page, axe_source, name)
