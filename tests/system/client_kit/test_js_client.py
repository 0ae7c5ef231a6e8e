"""static/svc-auth.js in Chromium, against the real service and the example sites (conftest.py).

Two kinds of page at a site's origin:
- the site's own page (`/`), driven through its buttons, for what a person sees;
- a blank "harness" page (conftest's HARNESS_PATH), in which the test creates the only SvcAuth
  instance and records its events, for the refresh mechanics.

The service's refresh endpoint can be held (`RefreshGate`): the test lets the refresh through
only once every call that should meet a 401 has met it, so "one refresh" is never luck.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
from playwright.sync_api import BrowserContext, Page, Request, Route, expect

from tests.support.accounts import PASSWORD
from tests.support.client_kit import (
    HARNESS_PATH,
    HTTP_TIMEOUT,
    BrowserThread,
    Kit,
    RunningSite,
    in_context,
    open_site,
    watch_errors,
)

pytestmark = pytest.mark.e2e

GARBAGE = "garbage.access.token"  # a 401 at every site, as an expired or revoked token would be

INSTALL = """async ({ serviceUrl, site, pricingUrl, brand }) => {
  const { SvcAuth } = await import(serviceUrl + "/static/svc-auth.js");
  const auth = new SvcAuth({ baseUrl: serviceUrl, brand, site, pricingUrl });
  const events = [];
  auth.on("signedout", () => events.push({ type: "signedout" }));
  auth.on("upgrade", (detail) => events.push({ type: "upgrade", ...detail }));
  window.kit = { auth, events };
}"""

START_CALLS = """([count, url]) => {
  window.kit.calls = Promise.all(Array.from({ length: count }, () =>
    window.kit.auth.fetch(url).then(async (r) => [r.status, await r.json()])));
}"""

SETTLE_MS = 10_000


def settle(page: Page, expression: str, arg: Any = None) -> Any:
    """`page.evaluate` of an async function, bounded: Playwright waits for a promise forever."""
    bounded = (f"async (arg) => await Promise.race([({expression})(arg), new Promise((_, fail) =>"
               f" setTimeout(() => fail(new Error('did not settle within {SETTLE_MS} ms')),"
               f" {SETTLE_MS}))])")
    return page.evaluate(bounded, arg)


# -- helpers (they run in the browser thread) -----------------------------------------------------


def open_harness(context: BrowserContext, kit: Kit, site: RunningSite, brand: str = "svc") -> Page:
    page = context.new_page()
    page.goto(site.url(HARNESS_PATH))
    settle(page, INSTALL, {"serviceUrl": kit.service.base_url, "site": site.name,
                            "pricingUrl": site.pricing_url, "brand": brand})
    return page


def local_storage(page: Page) -> dict[str, str]:
    stored: dict[str, str] = page.evaluate(
        "() => Object.fromEntries(Object.entries(localStorage))")
    return stored


def set_tokens(page: Page, access: str, refresh: str) -> None:
    page.evaluate("""([access, refresh]) => {
        localStorage.setItem("svc_access_token", access);
        localStorage.setItem("svc_refresh_token", refresh);
    }""", [access, refresh])


def events(page: Page) -> list[dict[str, Any]]:
    recorded: list[dict[str, Any]] = page.evaluate("() => window.kit.events")
    return recorded


def wait_until(page: Page, condition: Callable[[], bool], what: str,
               timeout: float = 10.0) -> None:
    """Poll, letting Playwright deliver its events meanwhile (wait_for_timeout does)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        page.wait_for_timeout(25)


class RefreshGate:
    """Holds every POST to the service's refresh endpoint until `release()`; counts them."""

    def __init__(self, target: Page | BrowserContext, kit: Kit) -> None:
        self.url = kit.service_url("/api/v1/auth/refresh")
        self.held: list[Route] = []
        self.posts = 0
        target.route(self.url, self._hold)

    def _hold(self, route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        self.posts += 1
        self.held.append(route)

    def release(self) -> None:
        while self.held:
            self.held.pop(0).continue_()


class Statuses:
    """The status of every response from `url`, in order."""

    def __init__(self, target: Page | BrowserContext, url: str) -> None:
        self.seen: list[int] = []
        target.on("response", lambda r: self.seen.append(r.status) if r.url == url else None)

    def count(self, status: int) -> int:
        return self.seen.count(status)


def requests_to(target: Page | BrowserContext, url: str, method: str = "POST") -> list[Request]:
    sent: list[Request] = []
    target.on("request", lambda r: sent.append(r) if r.url == url and r.method == method
              else None)
    return sent


def site_accepts(site: RunningSite, token: str) -> bool:
    with requests.get(site.url(f"/api/my-{site.items}"), timeout=HTTP_TIMEOUT,
                      headers={"Authorization": f"Bearer {token}"}) as response:
        return response.status_code == 200


def service_refresh_status(kit: Kit, refresh_token: str) -> int:
    with requests.post(kit.service_url("/api/v1/auth/refresh"), timeout=HTTP_TIMEOUT,
                       json={"refresh_token": refresh_token}) as response:
        return response.status_code


# -- signing in and the storage keys --------------------------------------------------------------


def test_password_sign_in_keeps_both_tokens_under_the_brand_keys(kit: Kit,
                                                                 browser_thread: BrowserThread):
    site = kit.symbols
    email = kit.create_account()

    def scenario(context: BrowserContext) -> dict[str, str]:
        page = open_site(context, site)
        errors = watch_errors(page)
        expect(page.locator("#who")).to_have_text("Signed out")

        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill("not the password")
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.get_by_role("alert").filter(has_text="Incorrect")).to_be_visible()
        assert local_storage(page) == {}

        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.locator("#who")).to_have_text(f"Signed in as {email}")
        stored = local_storage(page)
        page.reload()
        page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(page.locator("#who")).to_have_text("Signed in")
        assert errors == []
        return stored

    stored = browser_thread.run(in_context(site, scenario))
    assert set(stored) == {"svc_access_token", "svc_refresh_token"}
    header = jwt.get_unverified_header(stored["svc_access_token"])
    assert header["typ"] == "at+jwt" and header["alg"] == "ES256"
    assert site_accepts(kit.footprints, stored["svc_access_token"])
    assert len(stored["svc_refresh_token"]) >= 43


def test_another_brand_uses_its_own_keys_and_sign_out_ends_the_session(
        kit: Kit, browser_thread: BrowserThread):
    site = kit.footprints
    email = kit.create_account()

    def scenario(context: BrowserContext) -> tuple[dict[str, str], dict[str, str], list[Any]]:
        page = open_harness(context, kit, site, brand="acme")
        user = settle(page, "([e, p]) => window.kit.auth.login(e, p)", [email, PASSWORD])
        assert user["email"] == email
        signed_in = local_storage(page)
        assert page.evaluate("() => window.kit.auth.accessToken") == signed_in[
            "acme_access_token"]
        logouts = requests_to(context, kit.service_url("/api/v2/auth/logout"))
        settle(page, "() => window.kit.auth.signOut({ hosted: false })")
        assert len(logouts) == 1
        assert logouts[0].all_headers()["authorization"] == (
            f"Bearer {signed_in['acme_access_token']}")
        assert page.evaluate("() => [window.kit.auth.accessToken, window.kit.auth.refreshToken]"
                             ) == ["", ""]
        return signed_in, local_storage(page), events(page)

    signed_in, after, recorded = browser_thread.run(in_context(site, scenario))
    assert set(signed_in) == {"acme_access_token", "acme_refresh_token"}
    assert after == {}
    assert recorded == [{"type": "signedout"}]
    assert service_refresh_status(kit, signed_in["acme_refresh_token"]) == 401


def test_sign_out_with_an_expired_access_token_still_ends_the_session(
        kit: Kit, browser_thread: BrowserThread):
    site = kit.symbols
    tokens = kit.login(kit.create_account())

    def scenario(context: BrowserContext) -> dict[str, Any]:
        page = open_harness(context, kit, site)
        set_tokens(page, GARBAGE, tokens["refresh_token"])
        logouts = Statuses(context, kit.service_url("/api/v2/auth/logout"))
        refreshes = requests_to(context, kit.service_url("/api/v1/auth/refresh"))
        settle(page, "() => window.kit.auth.signOut({ hosted: false })")
        return {"logouts": logouts.seen, "refreshes": len(refreshes),
                "stored": local_storage(page), "events": events(page)}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["logouts"] == [401, 204]  # refreshed once in between
    assert seen["refreshes"] == 1
    assert seen["stored"] == {} and seen["events"] == [{"type": "signedout"}]
    # The session is over: neither the old refresh token nor its successor works.
    assert service_refresh_status(kit, tokens["refresh_token"]) == 401


def test_the_redirect_sign_in_with_pkce_comes_back_signed_in(kit: Kit,
                                                            browser_thread: BrowserThread):
    site = kit.symbols
    email = kit.create_account()

    def scenario(context: BrowserContext) -> dict[str, Any]:
        exchanges = requests_to(context, kit.service_url("/api/v2/auth/exchange-code"))
        page = open_site(context, site)
        errors = watch_errors(page)
        page.get_by_role("button", name="Sign in with the service").click()
        page.wait_for_url(re.compile("^" + re.escape(kit.service_url("/login?"))))
        asked = {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}

        page.get_by_label("Email").fill(email)
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(site.url("/"))
        page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(page.locator("#who")).to_have_text("Signed in")
        stored = local_storage(page)
        pending = page.evaluate("() => sessionStorage.getItem('svc_pkce')")
        exchange_body = exchanges[0].post_data_json if exchanges else None

        # A callback this tab did not start: refused before any exchange, code out of the URL.
        page.goto(site.url("/auth/callback?code=stolen&provider=password&state=forged"))
        page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(page.get_by_role("alert")).to_contain_text("not started here")
        forged_url = page.url

        # A started sign-in the person declined: the error comes back, no exchange either.
        page.evaluate("""() => sessionStorage.setItem("svc_pkce",
            JSON.stringify({ state: "s-declined", verifier: "v".repeat(43) }))""")
        page.goto(site.url("/auth/callback?error=access_denied&state=s-declined"))
        page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(page.get_by_role("alert")).to_contain_text("access_denied")
        return {"asked": asked, "stored": stored, "pending": pending, "errors": errors,
                "exchanges": len(exchanges), "exchange_body": exchange_body,
                "forged_url": forged_url}

    seen = browser_thread.run(in_context(site, scenario))
    asked = seen["asked"]
    assert asked["redirect_uri"] == site.callback
    assert asked["code_challenge_method"] == "S256"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", asked["code_challenge"])
    assert len(asked["state"]) >= 22
    assert set(seen["stored"]) == {"svc_access_token", "svc_refresh_token"}
    assert site_accepts(site, seen["stored"]["svc_access_token"])
    assert seen["pending"] is None  # single use
    assert seen["exchanges"] == 1
    body = seen["exchange_body"]
    assert set(body) == {"code", "provider", "code_verifier", "redirect_uri"}
    assert body["provider"] == "password" and body["redirect_uri"] == site.callback
    assert re.fullmatch(r"[A-Za-z0-9_-]{43,128}", body["code_verifier"])
    assert seen["forged_url"] == site.callback  # code and state removed from the address bar
    assert seen["errors"] == []


# -- refresh: once per tab, once per site ---------------------------------------------------------


def test_five_concurrent_401s_share_one_refresh_and_all_succeed(kit: Kit,
                                                               browser_thread: BrowserThread):
    site = kit.symbols
    tokens = kit.login(kit.create_account())
    api = site.url("/api/my-symbols")

    def scenario(context: BrowserContext) -> dict[str, Any]:
        page = open_harness(context, kit, site)
        set_tokens(page, GARBAGE, tokens["refresh_token"])
        gate = RefreshGate(page, kit)
        statuses = Statuses(page, api)
        page.evaluate(START_CALLS, [5, api])
        wait_until(page, lambda: statuses.count(401) == 5 and gate.posts == 1,
                   "five 401s and the refresh")
        page.wait_for_timeout(300)
        held_refreshes = gate.posts  # nothing else asked for one while the first was held
        gate.release()
        results = settle(page, "() => window.kit.calls")
        return {"results": results, "held": held_refreshes, "refreshes": gate.posts,
                "statuses": statuses.seen, "stored": local_storage(page),
                "events": events(page)}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["held"] == 1 and seen["refreshes"] == 1
    assert seen["results"] == [[200, {"items": []}]] * 5
    assert sorted(seen["statuses"]) == [200] * 5 + [401] * 5
    stored = seen["stored"]
    assert stored["svc_access_token"] != GARBAGE
    assert stored["svc_refresh_token"] != tokens["refresh_token"]  # rotated
    assert site_accepts(site, stored["svc_access_token"])
    assert seen["events"] == []


def test_two_tabs_of_a_site_refresh_once_between_them(kit: Kit, browser_thread: BrowserThread):
    site = kit.footprints
    tokens = kit.login(kit.create_account())
    api = site.url("/api/my-footprints")

    def scenario(context: BrowserContext) -> dict[str, Any]:
        first = open_harness(context, kit, site)
        second = open_harness(context, kit, site)
        set_tokens(first, GARBAGE, tokens["refresh_token"])  # one localStorage for both tabs
        gate = RefreshGate(context, kit)
        statuses = Statuses(context, api)
        first.evaluate(START_CALLS, [3, api])
        second.evaluate(START_CALLS, [3, api])
        wait_until(first, lambda: statuses.count(401) == 6 and gate.posts == 1,
                   "six 401s in two tabs and the first refresh")
        first.wait_for_timeout(300)
        held_refreshes = gate.posts  # the second tab waits for the lock, not the network
        gate.release()
        return {"first": settle(first, "() => window.kit.calls"),
                "second": settle(second, "() => window.kit.calls"),
                "held": held_refreshes, "refreshes": gate.posts,
                "stored": local_storage(second),
                "events": events(first) + events(second)}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["held"] == 1 and seen["refreshes"] == 1
    assert seen["first"] == [[200, {"items": []}]] * 3
    assert seen["second"] == [[200, {"items": []}]] * 3
    assert seen["stored"]["svc_refresh_token"] != tokens["refresh_token"]
    assert site_accepts(site, seen["stored"]["svc_access_token"])
    assert seen["events"] == []


def test_a_refused_refresh_signs_out_every_tab(kit: Kit, browser_thread: BrowserThread):
    site = kit.symbols
    api = site.url("/api/my-symbols")

    def scenario(context: BrowserContext) -> dict[str, Any]:
        first = open_harness(context, kit, site)
        second = open_harness(context, kit, site)
        set_tokens(first, GARBAGE, "a-refresh-token-the-service-never-issued")
        refreshes = requests_to(context, kit.service_url("/api/v1/auth/refresh"))
        statuses = settle(first, """async (url) => {
            const answers = await Promise.all([1, 2, 3].map(() => window.kit.auth.fetch(url)));
            return answers.map((r) => r.status);
        }""", api)
        wait_until(second, lambda: events(second) != [], "the other tab to hear of it")
        second.wait_for_timeout(200)  # a second event would have arrived by now
        return {"statuses": statuses, "refreshes": len(refreshes),
                "first": (local_storage(first), events(first)),
                "second": (local_storage(second), events(second))}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["statuses"] == [401, 401, 401]
    assert seen["refreshes"] == 1
    assert seen["first"] == ({}, [{"type": "signedout"}])
    assert seen["second"] == ({}, [{"type": "signedout"}])


def test_the_sites_page_shows_a_sign_out_from_another_tab(kit: Kit,
                                                         browser_thread: BrowserThread):
    site = kit.footprints
    tokens = kit.login(kit.create_account())

    def scenario(context: BrowserContext) -> None:
        first = open_site(context, site)
        set_tokens(first, tokens["access_token"], tokens["refresh_token"])
        first.reload()
        second = open_site(context, site)
        expect(first.locator("#who")).to_have_text("Signed in")
        expect(second.locator("#who")).to_have_text("Signed in")
        second.get_by_role("button", name="Sign out").click()
        expect(second.locator("#who")).to_have_text("Signed out")
        expect(first.locator("#who")).to_have_text("Signed out")
        expect(first.get_by_role("button", name="Sign in with the service")).to_be_visible()
        assert local_storage(first) == {}

    browser_thread.run(in_context(site, scenario))
    assert service_refresh_status(kit, tokens["refresh_token"]) == 401


# -- upgrade required -----------------------------------------------------------------------------


def test_402_shows_upgrade_required_with_the_pricing_link(kit: Kit,
                                                          browser_thread: BrowserThread):
    site = kit.symbols
    email = kit.create_account()
    tokens = kit.login(email)

    def scenario(context: BrowserContext) -> None:
        harness = open_harness(context, kit, site)
        set_tokens(harness, tokens["access_token"], tokens["refresh_token"])
        status = settle(harness, """() => window.kit.auth.fetch("/api/generate", {
            method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ prompt: "x" }) }).then((r) => r.status)""")
        assert status == 402
        assert events(harness) == [{"type": "upgrade", "status": 402,
                                    "pricingUrl": site.pricing_url}]
        # A 403 from a gated call is the same "upgrade required".
        context.route(site.url("/api/team-only"), lambda route: route.fulfill(
            status=403, content_type="application/problem+json",
            body='{"status": 403, "code": "upgrade_required"}'))
        assert settle(harness, """() => window.kit.auth.fetch("/api/team-only")
            .then((r) => r.status)""") == 403
        assert events(harness)[-1] == {"type": "upgrade", "status": 403,
                                       "pricingUrl": site.pricing_url}
        harness.close()

        page = open_site(context, site)
        errors = watch_errors(page)
        page.get_by_role("button", name="Generate").click()
        upgrade = page.locator("#upgrade")
        expect(upgrade).to_be_visible()
        expect(upgrade).to_contain_text("Upgrade required")
        link = page.get_by_role("link", name="See plans and pricing")
        expect(link).to_have_attribute("href", site.pricing_url)
        link.click()
        page.wait_for_url(site.pricing_url)
        expect(page.get_by_role("heading", name="Plans and pricing")).to_be_visible()

        kit.cli("users", "set-plan", email, "pro")
        page.go_back()
        page.wait_for_selector("body[data-ready=true]", state="attached")
        page.get_by_role("button", name="Generate").click()
        expect(page.locator("#result")).to_contain_text("Generated symbol")
        expect(upgrade).to_be_hidden()
        assert errors == []

    browser_thread.run(in_context(site, scenario))


def test_the_bearer_token_goes_to_this_site_and_the_service_only(kit: Kit,
                                                                browser_thread: BrowserThread):
    site, other = kit.symbols, kit.footprints
    tokens = kit.login(kit.create_account())

    def scenario(context: BrowserContext) -> dict[str, dict[str, str]]:
        page = open_harness(context, kit, site)
        set_tokens(page, tokens["access_token"], tokens["refresh_token"])
        own = requests_to(context, site.url("/api/health"), "GET")
        foreign = requests_to(context, other.url("/api/health"), "GET")
        settle(page, """async ([mine, theirs]) => {
            await window.kit.auth.fetch(mine);
            await window.kit.auth.fetch(theirs).catch(() => null);  // no CORS there: it fails
        }""", [site.url("/api/health"), other.url("/api/health")])
        wait_until(page, lambda: bool(own and foreign), "both requests")
        return {"own": own[0].all_headers(), "foreign": foreign[0].all_headers()}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["own"]["authorization"] == f"Bearer {tokens['access_token']}"
    assert "authorization" not in seen["foreign"]


def test_a_v1_login_that_needs_a_second_factor_says_where_to_sign_in(
        kit: Kit, browser_thread: BrowserThread):
    """The service's 403 mfa_required (tests/unit/api/test_v2_second_factor.py): the kit rejects
    with its code and login_url, and the example site tells the person what to do."""
    site = kit.symbols
    email = kit.create_account()
    login_url = kit.service_url("/login")
    problem = json.dumps({"status": 403, "code": "mfa_required", "title": "Forbidden",
                          "type": "about:blank", "detail": "This account has a second factor.",
                          "login_url": login_url})

    def scenario(context: BrowserContext) -> None:
        context.route(kit.service_url("/api/v1/auth/login"), lambda route: route.fulfill(
            status=403, content_type="application/problem+json", body=problem))
        harness = open_harness(context, kit, site)
        refused = harness.evaluate("""([e, p]) => window.kit.auth.login(e, p).then(
            () => null, (error) => [error.code, error.status, error.loginUrl])""",
                                   [email, PASSWORD])
        assert refused == ["mfa_required", 403, login_url]
        harness.close()

        page = open_site(context, site)
        errors = watch_errors(page)
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.get_by_role("alert").filter(has_text="second factor")).to_be_visible()
        assert local_storage(page) == {}
        assert errors == []

    browser_thread.run(in_context(site, scenario))


def test_sign_out_ends_the_hosted_session_too_so_the_next_sign_in_asks(
        kit: Kit, browser_thread: BrowserThread):
    site = kit.symbols
    email = kit.create_account()

    def sign_in_through_the_service(page: Page) -> None:
        page.get_by_role("button", name="Sign in with the service").click()
        page.wait_for_url(re.compile("^" + re.escape(kit.service_url("/login?"))))

    def scenario(context: BrowserContext) -> dict[str, Any]:
        page = open_site(context, site)
        errors = watch_errors(page)
        sign_in_through_the_service(page)
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(site.url("/"))
        page.wait_for_selector("body[data-ready=true]", state="attached")
        expect(page.locator("#who")).to_have_text("Signed in")
        refresh_token = local_storage(page)["svc_refresh_token"]

        with page.expect_navigation(url=site.url("/")):  # through the service's sign-out, home
            page.get_by_role("button", name="Sign out").click()
        page.wait_for_selector("body[data-ready=true]", state="attached")
        after = local_storage(page)
        sign_in_through_the_service(page)  # the hosted session is over: the form is shown
        asks = page.get_by_label("Password", exact=True).is_visible()
        return {"refresh_token": refresh_token, "after": after, "asks": asks, "errors": errors}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["after"] == {}
    assert seen["asks"]
    assert service_refresh_status(kit, seen["refresh_token"]) == 401
    assert seen["errors"] == []
