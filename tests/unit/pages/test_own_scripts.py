"""What the hosted pages render for their small scripts and provider buttons (issue 25, part 3):
the show-password buttons and the recovery codes' copy button, hidden and in the page's language
until our own script shows them, with the policy that lets only that script run; and the
provider buttons with the providers' marks, served from our own origin. (In Chromium:
tests/system/browser/test_page_scripts.py.)"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from app.domain.accounts.providers import PROVIDERS
from app.pages.own_scripts import own_script
from app.web.headers import CONTENT_SECURITY_POLICY
from tests.support.accounts import OWNED
from tests.support.pages import submit
from tests.support.second_factors import code_at

pytestmark = pytest.mark.app_settings("pages")

SHOW_PASSWORD = '<script src="/static/show-password.js" defer>'
COPY_CODES = '<script src="/static/copy-codes.js" defer>'
SVG = "{http://www.w3.org/2000/svg}"


def scripts(page) -> list[str]:
    return re.findall(r"<script[^>]*>", page.text)


def show_buttons(page) -> list[str]:
    return re.findall(r'<button type="button" class="show-password"[^>]*>[^<]*</button>',
                      page.text)


def password_inputs(page) -> list[str]:
    return re.findall(r'<input[^>]*\bid="([^"]+)"[^>]*type="password"', page.text) + \
        re.findall(r'<input[^>]*type="password"[^>]*\bid="([^"]+)"', page.text)


@pytest.fixture
def user(make_user):
    return make_user(**OWNED)


def test_each_password_field_gets_a_hidden_show_button_and_the_script_once(client, user):
    signup = client.get("/signup")
    assert show_buttons(signup) == [
        '<button type="button" class="show-password" aria-controls="password" '
        'data-hide="Hide password" hidden>Show password</button>']
    assert scripts(signup) == [SHOW_PASSWORD]
    assert signup.headers["Content-Security-Policy"] == \
        f"{CONTENT_SECURITY_POLICY}; script-src 'self'"
    submit(client, "/login", {"email": user.email, "password": user.password})
    account = client.get("/account")
    fields = sorted(set(password_inputs(account)))
    # The password change's two fields and the new address's: three buttons, one script.
    assert fields == ["current_password", "email-password", "new_password"]
    controlled = sorted(re.search(r'aria-controls="([^"]+)"', button).group(1)
                        for button in show_buttons(account))
    assert controlled == fields
    assert scripts(account).count(SHOW_PASSWORD) == 1


@pytest.mark.parametrize(("language", "show", "hide"), [
    ("en", "Show password", "Hide password"), ("de", "Passwort anzeigen", "Passwort verbergen"),
    ("fr", "Afficher le mot de passe", "Masquer le mot de passe"),
    ("es", "Mostrar contraseña", "Ocultar contraseña")])
def test_the_show_button_carries_both_its_words_in_the_pages_language(client, language, show,
                                                                      hide):
    page = client.get("/login", headers={"Accept-Language": language})
    assert show_buttons(page) == [
        f'<button type="button" class="show-password" aria-controls="password" '
        f'data-hide="{hide}" hidden>{show}</button>']


def test_a_page_without_a_password_field_runs_no_script(client):
    page = client.get("/forgot-password")
    assert scripts(page) == [] and "show-password" not in page.text
    assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY


def test_only_our_own_page_scripts_can_be_asked_for(app):
    with app.test_request_context("/"), pytest.raises(ValueError):
        own_script("https://evil.example/x.js")


def test_provider_buttons_come_first_with_their_mark_and_their_words(client):
    page = client.get("/login?callback=symbols").text
    buttons = page.index('class="providers"')
    assert buttons < page.index('<form method="post" action="/login')
    link = re.search(r'<a class="button provider" href="/login/github[^"]*">(.*?)</a>', page,
                     re.S)
    assert link is not None
    mark, words = link.group(1).split("</svg>")
    assert 'aria-hidden="true"' in mark and 'focusable="false"' in mark
    assert '<use href="/static/provider-marks.svg#github">' in mark
    assert words.strip() == "<span>Sign in with GitHub</span>"
    signup = client.get("/signup").text
    assert "<span>Sign up with GitHub</span>" in signup
    assert signup.index('class="providers"') < signup.index('<form method="post"')


def test_the_marks_are_ours_and_githubs_takes_the_text_colour(client):
    served = client.get("/static/provider-marks.svg")
    assert served.status_code == 200 and served.mimetype == "image/svg+xml"
    root = ET.fromstring(served.data)  # noqa: S314  (our own file)
    symbols = {symbol.get("id"): symbol for symbol in root.iter(f"{SVG}symbol")}
    assert set(PROVIDERS) <= set(symbols)
    assert {path.get("fill") for path in symbols["github"].iter(f"{SVG}path")} == {"currentColor"}
    assert {path.get("fill") for path in symbols["google"].iter(f"{SVG}path")} == {
        "#EA4335", "#4285F4", "#FBBC05", "#34A853"}  # Google's four colours, never themed
    # Shapes only: no script, no style, no reference to anything.
    assert {element.tag for element in root.iter()} == {f"{SVG}svg", f"{SVG}symbol", f"{SVG}path"}
    assert {name for element in root.iter() for name in element.attrib} <= {
        "id", "viewBox", "fill", "fill-rule", "d"}


def test_the_recovery_codes_page_offers_copy_with_a_script_and_download_without(
        client, user, clock):
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert submit(client, "/account/totp/start", {}, token_from="/account").status_code == 302
    setup = client.get("/account/totp")
    secret = re.search(r'<code class="key">([A-Z2-7 ]+)</code>', setup.text).group(1)
    page = submit(client, "/account/totp", {"code": code_at(secret.replace(" ", ""), clock)})
    assert page.status_code == 200 and "Your recovery codes" in page.text
    codes = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", page.text)
    assert len(codes) == 10
    button = re.search(r"<button[^>]*data-copy-codes[^>]*>([^<]*)</button>", page.text)
    assert button is not None and button.group(1) == "Copy the codes"
    assert ' hidden>' in button.group(0) and 'data-copied="Copied"' in button.group(0)
    assert 'data-copy-codes="recovery-codes"' in button.group(0)
    assert '<ul class="recovery-codes" id="recovery-codes">' in page.text
    assert '<p class="copy-status" id="copy-status" role="status"></p>' in page.text
    assert scripts(page) == [COPY_CODES]
    assert page.headers["Content-Security-Policy"] == \
        f"{CONTENT_SECURITY_POLICY}; script-src 'self'"  # it calls nothing back
    download = re.search(r'href="data:text/plain;charset=utf-8,([^"]+)"', page.text)
    assert download is not None and codes[0] in download.group(1)
