"""Every hosted page in Chromium, at phone (360 x 740) and desktop (1280 x 800) width:

- axe-core finds no serious or critical violation;
- a screenshot is saved to build/screenshots/<page>-<width>.png;
- the document carries the security headers (a CSP with frame-ancestors 'none' and no
  'unsafe-inline', Referrer-Policy: no-referrer, X-Content-Type-Options: nosniff);
- nothing the page loads comes from another origin;
- it does not scroll sideways.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import requests
from playwright.sync_api import Page, Response, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.browser import (
    GENEROUS_LIMITS,
    HTTP_TIMEOUT,
    ContextFactory,
    Site,
    create_account,
    link_in,
    read_mail,
    sign_in_with_form,
    signed_in,
    signed_in_and_confirmed,
    start_authenticator,
)
from tests.support.browser import submit_button as _submit

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = ROOT / "build" / "screenshots"
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}
FAILING_IMPACTS = ("serious", "critical")
IPHONE_UA = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
             "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")

# How to reach each page: setup in the browser (and through the API), then the final load, whose
# response is the page's own document. Returns (the origin the page is served from, the load).
Load = Callable[[], Response | None]
Reach = Callable[[Page, Site, pytest.FixtureRequest], tuple[str, Load]]


def _reset_link(site: Site) -> str:
    email = new_email("a11y-reset")
    create_account(site, email)
    with requests.post(site.url("/api/v2/auth/forgot-password"), json={"email": email},
                       timeout=HTTP_TIMEOUT) as answer:
        assert answer.status_code == 202
    return link_in(read_mail(site, email, "Reset your password"), "/reset-password")


def login(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    return site.base_url, lambda: page.goto(site.url("/login?callback=symbols"))


def login_error(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    page.goto(site.url("/login?callback=symbols"))
    page.get_by_label("Email").fill("nobody@example.com")
    page.get_by_label("Password", exact=True).fill("not the password")
    return site.base_url, _submit(page, "Sign in")


def signup(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    return site.base_url, lambda: page.goto(site.url("/signup?callback=symbols"))


def signup_errors(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    page.goto(site.url("/signup?callback=symbols"))
    page.get_by_label("Name").fill("Ada")
    page.get_by_label("Email").fill("ada-at-example.com")
    page.get_by_label("Password", exact=True).fill("password1")
    return site.base_url, _submit(page, "Create account")


def forgot_password(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    return site.base_url, lambda: page.goto(site.url("/forgot-password"))


def forgot_sent(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    page.goto(site.url("/forgot-password"))
    page.get_by_label("Email").fill(new_email("a11y-nobody"))
    return site.base_url, _submit(page, "Send the link")


def reset_password(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    link = _reset_link(site)
    return site.base_url, lambda: page.goto(link)


def reset_done(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    page.goto(_reset_link(site))
    page.get_by_label("New password").fill("a brand new passphrase for reset")
    return site.base_url, _submit(page, "Set the password")


def confirm_email(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = new_email("a11y-confirm")
    create_account(site, email)
    link = link_in(read_mail(site, email, "Confirm your email address"), "/confirm-email")
    return site.base_url, lambda: page.goto(link)


def reset_link_used(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    link = _reset_link(site)
    page.goto(link)
    page.get_by_label("New password").fill("a brand new passphrase for reset")
    _submit(page, "Set the password")()
    return site.base_url, lambda: page.goto(link)


def account(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = new_email("a11y-account")
    create_account(site, email, full_name="Ada Lovelace")
    # A second device, so the session list shows two rows.
    with requests.post(site.url("/api/v2/auth/login"), json={"email": email, "password": PASSWORD},
                       headers={"User-Agent": IPHONE_UA}, timeout=HTTP_TIMEOUT) as answer:
        assert answer.status_code == 200
    page.goto(site.url("/login"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(site.url("/account"))
    return site.base_url, lambda: page.goto(site.url("/account"))


def link_account(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = new_email("a11y-link")
    create_account(site, email)  # unconfirmed, with a password: Google must ask for proof
    site.oidc.next_login(sub=f"google-{email}", email=email, email_verified=True)
    page.goto(site.url("/login"))
    page.get_by_role("link", name="Sign in with Google").click()
    expect(page).to_have_url(site.url("/login/link"))
    return site.base_url, lambda: page.goto(site.url("/login/link"))


def totp_setup(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    signed_in_and_confirmed(page, site, "a11y-totp")
    page.get_by_role("button", name="Set up an authenticator app").click()
    expect(page).to_have_url(site.url("/account/totp"))
    return site.base_url, lambda: page.goto(site.url("/account/totp"))


def _enrolled(page: Page, site: Site, label: str) -> str:
    email = signed_in_and_confirmed(page, site, label)
    start_authenticator(page)
    return email


def recovery_codes(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    _enrolled(page, site, "a11y-codes")
    return site.base_url, _submit(page, "Turn on")


def account_with_factor(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    _enrolled(page, site, "a11y-account-2fa")
    _submit(page, "Turn on")()
    return site.base_url, lambda: page.goto(site.url("/account"))


def second_step(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = _enrolled(page, site, "a11y-second-step")
    _submit(page, "Turn on")()
    page.context.clear_cookies()
    page.goto(site.url("/login?callback=symbols"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(re.compile(r".*/login/second-factor\?redirect_uri="))
    second_step_url = page.url
    return site.base_url, lambda: page.goto(second_step_url)


def unknown_callback(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    return site.base_url, lambda: page.goto(site.url("/login?callback=unknown"))


def oauth_error(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    # A provider callback this browser never started.
    return site.base_url, lambda: page.goto(
        site.url("/api/v2/auth/google/callback?state=forged&code=stolen"))


def not_found(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    return site.base_url, lambda: page.goto(site.url("/no/such/page"))


def rate_limited(page: Page, _site: Site, request: pytest.FixtureRequest) -> tuple[str, Load]:
    limited = request.getfixturevalue("server_factory")(
        env={**GENEROUS_LIMITS, "SVC_LIMIT_LOGIN": "1 per minute"}, workers=1)
    page.goto(limited.url("/login"))
    page.get_by_label("Email").fill("nobody@example.com")
    page.get_by_label("Password", exact=True).fill("not the password")
    _submit(page, "Sign in")()
    page.get_by_label("Password", exact=True).fill("not the password either")
    return limited.base_url, _submit(page, "Sign in")


PAGES: dict[str, tuple[Reach, int]] = {
    "login": (login, 200),
    "login-error": (login_error, 401),
    "signup": (signup, 200),
    "signup-errors": (signup_errors, 422),
    "forgot-password": (forgot_password, 200),
    "forgot-sent": (forgot_sent, 202),
    "reset-password": (reset_password, 200),
    "reset-done": (reset_done, 200),
    "reset-link-used": (reset_link_used, 400),
    "confirm-email": (confirm_email, 200),
    "account": (account, 200),
    "link-account": (link_account, 200),
    "totp-setup": (totp_setup, 200),
    "recovery-codes": (recovery_codes, 200),
    "account-with-factor": (account_with_factor, 200),
    "second-step": (second_step, 200),
    "unknown-callback": (unknown_callback, 400),
    "oauth-error": (oauth_error, 400),
    "not-found": (not_found, 404),
    "rate-limited": (rate_limited, 429),
}


def run_axe(page: Page, axe_source: str) -> list[dict[str, object]]:
    """axe-core's violations on the page as it is now. Injected over CDP: the pages' CSP allows
    no script, and evaluation through the DevTools protocol is not subject to it."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe_source)
    result = page.evaluate("""async () => {
        const found = await axe.run(document, {resultTypes: ["violations"]});
        return found.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
            nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary})),
        }));
    }""")
    return list(result)


def check_axe(page: Page, axe_source: str, where: str) -> None:
    violations = run_axe(page, axe_source)
    for violation in violations:  # shown with -rA / on failure; minor ones are information
        print(f"axe {where}: {violation['impact']} {violation['id']}: {violation['help']}")
    failing = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    assert not failing, f"axe at {where}:\n" + json.dumps(failing, indent=2)


def check_security_headers(response: Response, *, own_script: bool = False) -> None:
    """The headers every page has. `own_script`: a page that offers passkeys, whose policy also
    lets our script run and call back to us; a page with a password field may run our own
    scripts (the show-password button) but call nothing; every other page runs no script."""
    headers = response.headers
    csp = headers.get("content-security-policy", "")
    directives = {part.strip().split(" ", 1)[0]: part.strip() for part in csp.split(";")}
    assert directives.get("frame-ancestors") == "frame-ancestors 'none'", csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp
    if own_script:
        assert directives.get("script-src") == "script-src 'self'", csp
        assert directives.get("connect-src") == "connect-src 'self'", csp
    else:  # default-src 'none' forbids every other script, and every call back
        assert directives.get("script-src") in (None, "script-src 'self'"), csp
        assert "connect-src" not in directives, csp
    assert headers.get("referrer-policy") == "no-referrer", headers
    assert headers.get("x-content-type-options") == "nosniff", headers
    assert headers.get("content-type", "").startswith("text/html"), headers
    assert headers.get("cache-control") == "no-store", headers  # CSRF tokens, personal data


def no_horizontal_scroll(page: Page, width: int) -> None:
    scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide at {width} px"


@pytest.mark.parametrize("name", list(PAGES))
def test_page_is_accessible_secure_and_fits(name: str, new_context: ContextFactory, site: Site,
                                            axe_source: str, request: pytest.FixtureRequest):
    reach, status = PAGES[name]
    page = new_context(viewport=PHONE).new_page()
    origin, load = reach(page, site, request)

    loaded: list[str] = []
    page.on("request", lambda sent: loaded.append(sent.url))
    response = load()
    page.wait_for_load_state("load")
    assert response is not None
    assert response.status == status, (response.status, response.url)
    check_security_headers(response)
    foreign = [url for url in loaded if not url.startswith(origin + "/")]
    assert not foreign, f"requests to another origin: {foreign}"
    stylesheets = [url for url in loaded if url.endswith(".css")]
    assert stylesheets == [origin + "/static/svc.css"], loaded
    # Scripts: only our own small ones (show-password, copy the codes), and only where the
    # policy lets them run.
    scripts = [url for url in loaded if url.endswith(".js")]
    assert set(scripts) <= {origin + "/static/show-password.js",
                            origin + "/static/copy-codes.js",
                            origin + "/static/local-times.js"}, scripts
    assert ("script-src" in response.headers["content-security-policy"]) == bool(scripts)
    check_at_both_widths(page, axe_source, name)


def check_at_both_widths(page: Page, axe_source: str, name: str) -> None:
    """At 360 and 1280 px, light and dark (prefers-color-scheme): nothing scrolls sideways,
    axe finds no serious violation, and a screenshot goes to
    build/screenshots/<name>-<width>[-dark].png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        suffix = "-dark" if scheme == "dark" else ""
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            no_horizontal_scroll(page, size["width"])
            check_axe(page, axe_source, f"{name} at {size['width']} px, {scheme}")
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{size['width']}{suffix}.png"),
                            full_page=True)
    page.emulate_media(color_scheme="light")


def test_keyboard_focus_is_visible(page: Page, site: Site):
    """Tabbing from the top reaches the email field; every stop on the way shows an outline."""
    page.goto(site.url("/login"))
    for _ in range(3):
        page.keyboard.press("Tab")
        focused = page.evaluate("""() => {
            const el = document.activeElement, style = getComputedStyle(el);
            return {id: el.id, style: style.outlineStyle, width: parseFloat(style.outlineWidth)};
        }""")
        assert focused["style"] != "none" and focused["width"] >= 2, focused
        if focused["id"] == "email":
            break
    assert focused["id"] == "email", focused


AUTOCOMPLETE = {  # signed in: /login shows its form with prompt=login
    "/login?prompt=login": {"email": "username webauthn",  # passkeys offered too
                            "password": "current-password"},
    "/signup": {"full_name": "name", "email": "email", "password": "new-password"},
    "/forgot-password": {"email": "email"},
    "/account": {"full_name": "name",  # the person's own name (issue 37)
                 "username": "username", "current_password": "current-password",
                 "new_password": "new-password",
                 # issue 24's sections: a new address always asks the password (the undo
                 # link must stay the owner's way back), leaving asks none after a recent sign-in
                 "new_email": "email", "password": "current-password", "confirm_word": "off"},
}


def test_inputs_have_labels_and_the_right_autocomplete(page: Page, site: Site):
    signed_in(page, site, "autocomplete")
    for path, expected in AUTOCOMPLETE.items():
        page.goto(site.url(path))
        found = page.evaluate("""() => Object.fromEntries(
            [...document.querySelectorAll("main input:not([type=hidden]):not([type=checkbox])")]
                .map(el => [el.name, el.getAttribute("autocomplete")]))""")
        assert found == expected, (path, found)
        for name in expected:
            field = page.locator(f"main input[name={name}]")
            if name != "username":  # the account page's hidden username, for password managers
                expect(field).to_have_accessible_name(re.compile(r"\w"))
