"""The hosted pages as a site's visitors see them (issue 25, "Tests that prove it"): in Chromium,
in each of the four languages (en, fr, de, es: the picker's cookie), light and dark
(prefers-color-scheme), at 360 and 1280 px, the six pages of a sign-in from a site: login,
sign-up, the second step (an authenticator code), consent (a third-party OpenID Connect client),
the new password (reset) and the account page, each shown for a site with its display name,
logo and accent colour. For every one of the 96:

- `<html lang>` is the language, the site's name, logo and colour are there;
- axe-core finds no violation at all (not only the serious ones);
- no text overflows its box: nothing clipped in a box that hides or scrolls its overflow, no
  button's or field's text cut, no text past the edge of its block, nothing wider than the
  phone's viewport (German is the long one);
- a full-page screenshot goes to build/screenshots/matrix/<lang>-<page>-<width>[-dark].png.

One server and one browser for the module; three pages (a visitor, an account half-way through
its second step, a signed-in member) each loaded once a language and re-laid out for the four
scheme and width pairs.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.accounts import PASSWORD
from tests.support.browser import (
    DEFAULT_TIMEOUT_MS,
    GENEROUS_LIMITS,
    Site,
    link_in,
    read_mail,
    sign_in_with_form,
    signed_in_and_confirmed,
    start_authenticator,
)
from tests.support.encoding import pkce_pair
from tests.support.sqlite_server import server_pool
from tests.system.browser.test_accessibility import DESKTOP, PHONE, SCREENSHOTS, run_axe

pytestmark = pytest.mark.e2e

LANGUAGES = ("en", "fr", "de", "es")
SCHEMES = ("light", "dark")
MATRIX_SHOTS = SCREENSHOTS / "matrix"

# The family's own site (a handoff) and a third-party OpenID Connect client, each with its name,
# logo and colour; long names, to see them wrap.
BOOKS = {"name": "bookclub", "display": "Buchhandlung am Marktplatz", "accent": "#0b6e4f",
         "redirect": "https://books.example/cb"}
PARTNER = {"name": "partner", "display": "Terminplaner Nordlicht", "accent": "#6d28d9",
           "redirect": "https://partner.example/cb"}
LOGO = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40">'
        '<rect width="40" height="40" rx="8" fill="{accent}"/>'
        '<path d="M10 10h8a3 3 0 0 1 3 3v17a3 3 0 0 0-3-3h-8zM30 10h-8a3 3 0 0 0-3 3v17a3 3 0 0 1 '
        '3-3h8z" fill="#ffffff"/><rect x="50" y="14" width="62" height="12" rx="6" '
        'fill="{accent}"/></svg>')


@dataclass
class Matrix:
    site: Site
    pages: dict[str, Page]  # by who is looking: visitor, second, member
    urls: dict[str, tuple[str, str]]  # page name: (who, path)


def _register(site: Site, workdir: Path, looks: dict[str, str], *extra: str) -> None:
    logo = workdir / f"{looks['name']}.svg"
    logo.write_text(LOGO.format(accent=looks["accent"]), encoding="utf-8")
    site.server.cli("sites", "add", looks["name"], "--redirect-uri", looks["redirect"],
                    "--display-name", looks["display"], "--accent-color", looks["accent"],
                    "--logo", str(logo), "--home-url", looks["redirect"].replace("/cb", "/"),
                    *extra)


def _consent_path() -> str:
    _verifier, challenge = pkce_pair()
    return "/oauth2/authorize?" + urlencode({
        "response_type": "code", "client_id": PARTNER["name"], "redirect_uri": PARTNER["redirect"],
        "scope": "openid email profile", "state": "matrix", "nonce": "matrix",
        "code_challenge": challenge, "code_challenge_method": "S256"})


def _open(browser: Browser) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    context.set_default_navigation_timeout(DEFAULT_TIMEOUT_MS)
    return context, context.new_page()


@pytest.fixture(scope="module")
def matrix(browser: Browser) -> Iterator[Matrix]:
    workdir = Path(tempfile.mkdtemp(prefix="svc-browser-matrix-"))
    (workdir / "mail").mkdir()
    contexts: list[BrowserContext] = []
    try:
        with server_pool("matrix") as start:
            server = start(env={
                "SVC_MAIL_URL": f"file://{workdir / 'mail'}", "SVC_MAIL_RETRY_DELAY": "0.1",
                # Both providers' buttons (never followed here), and a second step that waits
                # for the whole module.
                "SVC_GOOGLE_CLIENT_ID": "matrix", "SVC_GOOGLE_CLIENT_SECRET": "matrix",
                "SVC_GITHUB_CLIENT_ID": "matrix", "SVC_GITHUB_CLIENT_SECRET": "matrix",
                "SVC_MFA_PENDING_TTL": "3600", **GENEROUS_LIMITS}, workers=1)
            # (No client-site server or Google stand-in: no journey here leaves the service.)
            site = Site(server, None, None, workdir / "mail")  # type: ignore[arg-type]
            _register(site, workdir, BOOKS)
            _register(site, workdir, PARTNER, "--third-party",
                      "--privacy-url", "https://partner.example/privacy",
                      "--terms-url", "https://partner.example/terms")
            pages: dict[str, Page] = {}
            for who in ("visitor", "second", "member"):
                context, pages[who] = _open(browser)
                contexts.append(context)
            yield Matrix(site, pages, _journeys(site, pages))
    finally:
        for context in contexts:
            context.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _journeys(site: Site, pages: dict[str, Page]) -> dict[str, tuple[str, str]]:
    """An account with an authenticator app, signed in as the member; the same account half-way
    through signing in again (its second step); and a reset link opened by the visitor."""
    member = pages["member"]
    email = signed_in_and_confirmed(member, site, "matrix")
    start_authenticator(member)
    member.get_by_role("button", name="Turn on").click()
    expect(member.get_by_role("heading", name="Your recovery codes")).to_be_visible()

    second = pages["second"]
    second.goto(site.url(f"/login?callback={BOOKS['name']}"))
    sign_in_with_form(second, email, PASSWORD)
    expect(second).to_have_url(re.compile(r".*/login/second-factor\?"))
    second_path = second.url.removeprefix(site.base_url)

    visitor = pages["visitor"]
    visitor.goto(site.url(f"/forgot-password?callback={BOOKS['name']}"))
    visitor.get_by_label("Email").fill(email)
    visitor.get_by_role("button", name="Send the link").click()
    visitor.goto(link_in(read_mail(site, email, "Reset your password"), "/reset-password"))
    expect(visitor).to_have_url(site.url(f"/reset-password?site={BOOKS['name']}"))
    return {
        "login": ("visitor", f"/login?callback={BOOKS['name']}"),
        "signup": ("visitor", f"/signup?callback={BOOKS['name']}"),
        "reset": ("visitor", f"/reset-password?site={BOOKS['name']}"),
        "second-step": ("second", second_path),
        "consent": ("member", _consent_path()),
        "account": ("member", f"/account?site={BOOKS['name']}"),
    }


PAGES = ("login", "signup", "second-step", "consent", "reset", "account")


# -- the checks -----------------------------------------------------------------------------------

# What does not fit (tests/system/browser/overflow.js): a list of what and where.
OVERFLOW = (Path(__file__).parent / "overflow.js").read_text(encoding="utf-8")

# The site's looks on the page: its colour, its logo loaded, its name said.
LOOKS = """() => {
  const logo = document.querySelector("header img.site-logo");
  const primary = document.querySelector("main .button:not(.secondary):not(.provider)");
  return {
    accent: getComputedStyle(document.documentElement).getPropertyValue("--accent").trim(),
    button: primary ? getComputedStyle(primary).backgroundColor : null,
    logo: logo ? logo.complete && logo.naturalWidth > 0 : false,
    text: document.body.innerText,
    lang: document.documentElement.lang,
  };
}"""


def _rgb(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def _check(page: Page, axe_source: str, where: str, phone: bool) -> list[str]:
    problems = [f"overflow: {problem}" for problem in page.evaluate(OVERFLOW, phone)]
    for violation in run_axe(page, axe_source):
        problems.append(f"axe {violation['impact']} {violation['id']}: {violation['help']} "
                        f"{json.dumps(violation['nodes'])[:600]}")
    return [f"{where}: {problem}" for problem in problems]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", PAGES)
def test_the_page_in_every_language_scheme_and_width(matrix: Matrix, axe_source: str, name: str,
                                                    lang: str):
    who, path = matrix.urls[name]
    page = matrix.pages[who]
    page.context.add_cookies([{"name": "svc_lang", "value": lang,
                               "url": matrix.site.base_url}])
    page.emulate_media(color_scheme="light")
    page.set_viewport_size(PHONE)
    response = page.goto(matrix.site.url(path))
    assert response is not None and response.status == 200, (name, response and response.status)
    site = PARTNER if name == "consent" else BOOKS
    looks: dict[str, Any] = page.evaluate(LOOKS)
    assert looks["lang"] == lang
    assert site["display"] in looks["text"]
    assert looks["logo"], "the site's logo did not load"
    assert looks["accent"] == site["accent"]
    if looks["button"] is not None:
        assert looks["button"] == _rgb(site["accent"])

    MATRIX_SHOTS.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            where = f"{name} in {lang} at {size['width']} px, {scheme}"
            problems += _check(page, axe_source, where, phone=size is PHONE)
            suffix = "-dark" if scheme == "dark" else ""
            page.screenshot(path=str(MATRIX_SHOTS / f"{lang}-{name}-{size['width']}{suffix}.png"),
                            full_page=True)
    assert not problems, "\n".join(problems)


def test_the_overflow_check_sees_what_it_must(browser: Browser):
    """The check finds cut, spilt and too-wide text, and nothing on a page that fits."""
    page = browser.new_page(viewport=PHONE)
    try:
        page.set_content("""<!doctype html><html lang="de"><body style="margin:0">
          <div id="cut" style="width:100px;overflow:hidden;white-space:nowrap">Sicherheitsschlüssel
            verwenden</div>
          <button id="short" style="width:60px;white-space:nowrap">Passwort anzeigen</button>
          <p id="spilt" style="width:80px">Donaudampfschifffahrtsgesellschaft</p>
          <div id="wide" style="width:500px">breit</div>
          <p id="fits" style="width:200px;overflow:hidden">Passt.</p></body></html>""")
        found = "\n".join(page.evaluate(OVERFLOW, True))
        assert "cut (" in found and 'div#cut "Sicherheitsschlüssel' in found
        assert 'button#short "Passwort anzeigen"' in found
        assert 'text past its box' in found and 'p#spilt "Donaudampf' in found
        assert 'past the viewport' in found and 'div#wide "breit"' in found
        assert "the page scrolls sideways" in found and "#fits" not in found
        assert page.evaluate(OVERFLOW, False) != []  # cut and spilt text, at any width
        page.set_content('<!doctype html><html lang="de"><body><p>Passt.</p></body></html>')
        assert page.evaluate(OVERFLOW, True) == []
    finally:
        page.close()



MARKS = """() => [...document.querySelectorAll("a.provider")].map((button) => {
  const mark = button.querySelector("svg.provider-mark");
  const box = mark.querySelector("use").getBBox();  // the symbol's shapes, once fetched
  return {name: button.innerText.trim(), drawn: box.width > 0 && box.height > 0,
          hidden: mark.getAttribute("aria-hidden"),
          paper: getComputedStyle(button).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)};
})"""


def _luminance(rgb: tuple[int, ...] | list[int]) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(one: tuple[int, ...] | list[int], other: tuple[int, ...] | list[int]) -> float:
    lighter, darker = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _pixels(png: bytes) -> list[tuple[int, ...]]:
    """The RGB pixels of a screenshot (8-bit RGB or RGBA, not interlaced, as Chromium writes)."""
    width, height = struct.unpack(">II", png[16:24])
    assert png[24] == 8 and png[25] in (2, 6) and png[28] == 0, "an unexpected PNG"
    channels, stride = (3 if png[25] == 2 else 4), width * (3 if png[25] == 2 else 4)
    data, at = b"", 8
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        data += png[at + 8:at + 8 + length] if kind == b"IDAT" else b""
        at += 12 + length
    raw, previous, pixels = zlib.decompress(data), bytearray(stride), []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):  # undo the row's filter (PNG spec, section 9)
            a = line[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            paeth = min((abs(b - c), a), (abs(a - c), b), (abs(a + b - 2 * c), c))[1]
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth)[kind]) & 255
        pixels += [tuple(line[i:i + 3]) for i in range(0, stride, channels)]
        previous = line
    return pixels


def test_the_provider_marks_are_drawn_and_githubs_shows_in_both_schemes(matrix: Matrix):
    """Each button's mark is fetched from our origin and drawn; GitHub's, in the button's text
    colour, stands out from the button in light and in dark: a good part of its pixels keep 3:1
    against the button (a graphic's bar, WCAG 1.4.11)."""
    page = matrix.pages["visitor"]
    page.context.add_cookies([{"name": "svc_lang", "value": "en", "url": matrix.site.base_url}])
    page.goto(matrix.site.url(f"/login?callback={BOOKS['name']}"))
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        marks = {mark["name"]: mark for mark in page.evaluate(MARKS)}
        assert set(marks) == {"Sign in with Google", "Sign in with GitHub"}
        assert all(mark["drawn"] and mark["hidden"] == "true" for mark in marks.values()), marks
        for name, mark in marks.items():
            shot = page.get_by_role("link", name=name).locator("svg").screenshot()
            pixels = _pixels(shot)
            seen = sum(_contrast(pixel, mark["paper"]) >= 3 for pixel in pixels) / len(pixels)
            assert seen > 0.2, f"{name}'s mark in {scheme}: {seen:.0%} of it stands out"
    page.emulate_media(color_scheme="light")
