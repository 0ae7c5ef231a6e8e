"""The person's language (app/web/locale.py): the picker's cookie, then the account's saved
language, then Accept-Language; English otherwise. <html lang> says which. (ui_locales, which
comes first: tests/unit/oidc/test_endpoints_languages.py.)"""

from __future__ import annotations

import re

import pytest
from flask_babel import force_locale, gettext

from app.extensions import db
from app.models import User
from app.pages.blueprint import duration
from tests.support.pages import csrf_token, submit

pytestmark = pytest.mark.app_settings("pages")


def lang_of(page) -> str:
    found = re.search(r'<html lang="([^"]+)">', page.text)
    assert found, page.text[:200]
    return found.group(1)


def test_a_request_without_a_language_is_english(client):
    assert lang_of(client.get("/login")) == "en"


def test_accept_language_picks_a_language_we_have(client):
    assert lang_of(client.get("/login", headers={"Accept-Language": "de"})) == "de"
    assert lang_of(client.get("/login", headers={"Accept-Language": "fr-CA,fr;q=0.9"})) == "fr"
    assert lang_of(client.get("/login", headers={"Accept-Language": "ja, es;q=0.5"})) == "es"
    assert lang_of(client.get("/login", headers={"Accept-Language": "ja"})) == "en"


def test_the_pickers_cookie_comes_before_accept_language(client):
    picked = submit(client, "/language", {"language": "fr", "next": "/signup?x=1"},
                    token_from="/login")
    assert picked.status_code == 303 and picked.headers["Location"] == "/signup?x=1"
    assert "svc_lang=fr" in picked.headers["Set-Cookie"]
    assert lang_of(client.get("/login", headers={"Accept-Language": "de"})) == "fr"


def test_the_picker_needs_its_csrf_token_and_stays_on_this_site(client):
    assert client.post("/language", data={"language": "fr"}).status_code == 400
    for elsewhere in ("https://evil.example/", "//evil.example/", "/\\evil.example", None):
        data = {"language": "de", **({"next": elsewhere} if elsewhere else {})}
        picked = submit(client, "/language", data, token_from="/login")
        assert picked.headers["Location"] == "/"


# A browser drops tabs and line breaks from a URL and reads a backslash as a slash: each of
# these is another origin ("//evil.example") once it reaches the address bar, or a broken header.
@pytest.mark.parametrize("elsewhere", ["/\t/evil.example", "/\n/evil.example", "/\r/evil.example",
                                       "/\r\nSet-Cookie: svc_lang=xx", " //evil.example",
                                       "/ /evil.example", "/\x00", "/a\\b"])
def test_the_pickers_way_back_holds_no_character_a_browser_reads_otherwise(client, elsewhere):
    picked = submit(client, "/language", {"language": "de", "next": elsewhere},
                    token_from="/login")
    assert picked.status_code == 303 and picked.headers["Location"] == "/"


def test_an_unknown_choice_is_english(client):
    submit(client, "/language", {"language": "xx"}, token_from="/login")
    assert lang_of(client.get("/login", headers={"Accept-Language": "de"})) == "en"


def test_the_pages_picker_offers_each_language_in_its_own_name(client):
    page = client.get("/login", headers={"Accept-Language": "es"}).text
    assert '<option value="es" lang="es" selected>Español</option>' in page
    assert ">Deutsch<" in page and ">Français<" in page and ">English<" in page


@pytest.mark.parametrize("cookie", ["../../de", "de\x00", "x" * 3000, "de;q=1", "<b>fr</b>"])
def test_a_forged_language_cookie_names_no_language_and_breaks_no_page(client, cookie):
    client.set_cookie("svc_lang", cookie)
    page = client.get("/login", headers={"Accept-Language": "es"})
    assert page.status_code == 200 and lang_of(page) == "es"  # as if there were none


def test_a_choice_signed_in_is_saved_on_the_account_and_follows_it(app, signed_in, user):
    submit(signed_in, "/language", {"language": "es", "next": "/account"}, token_from="/account")
    with app.app_context():
        assert db.session.get(User, user.id).language == "es"
    elsewhere = app.test_client()
    submit(elsewhere, "/login", {"email": user.email, "password": user.password})
    assert lang_of(elsewhere.get("/account", headers={"Accept-Language": "de"})) == "es"


def test_the_account_keeps_only_a_language_we_have(app, signed_in, user):
    for chosen, kept in (("de-AT", "de"), ("../../fr", "en"), ("<b>es</b>", "en")):
        submit(signed_in, "/language", {"language": chosen}, token_from="/account")
        with app.app_context():
            assert db.session.get(User, user.id).language == kept


def test_the_accounts_language_comes_after_the_pickers_cookie(app, signed_in, user):
    with app.app_context():
        db.session.get(User, user.id).language = "de"
        db.session.commit()
    assert lang_of(signed_in.get("/account", headers={"Accept-Language": "fr"})) == "de"
    signed_in.set_cookie("svc_lang", "es")
    assert lang_of(signed_in.get("/account", headers={"Accept-Language": "fr"})) == "es"


def test_error_pages_and_the_picker_speak_the_language_too(client):
    page = client.get("/no-such-page", headers={"Accept-Language": "de"})
    assert page.status_code == 404 and lang_of(page) == "de"
    assert csrf_token(client, "/login")


# What the chosen language says: the words, the plural forms, the dates and the mails. --------

WAITS = {"en": ("Try again in 1 second.", "Try again in 2 seconds."),
         "fr": ("Réessayez dans 1 seconde.", "Réessayez dans 2 secondes."),
         "de": ("Versuchen Sie es in 1 Sekunde erneut.", "Versuchen Sie es in 2 Sekunden erneut."),
         "es": ("Vuelve a intentarlo dentro de 1 segundo.",
                "Vuelve a intentarlo dentro de 2 segundos.")}


def test_a_wait_has_the_right_plural_in_every_language(app):
    with app.test_request_context():
        for code, (one, two) in WAITS.items():
            with force_locale(code):
                said = [str(gettext("Try again in %(wait)s.", wait=duration(n))) for n in (1, 2)]
            assert said == [one, two], code


def test_the_sign_in_page_is_in_the_chosen_language(client):
    page = client.get("/login", headers={"Accept-Language": "fr"}).text
    assert "Se connecter" in page and "Mot de passe" in page and ">Sign in<" not in page


def test_dates_on_the_account_page_follow_the_language(app, signed_in):
    english = signed_in.get("/account", headers={"Accept-Language": "en"}).text
    german = signed_in.get("/account", headers={"Accept-Language": "de"}).text
    assert re.search(r"\b\d{1,2}\.\d{2}\.\d{4}, \d{2}:\d{2}", german)  # 27.11.2026, 08:15
    assert not re.search(r"\b\d{1,2}\.\d{2}\.\d{4}, \d{2}:\d{2}", english)


def test_the_mails_of_a_french_account_are_in_french(app, client, user, mailbox):
    with app.app_context():
        db.session.get(User, user.id).language = "fr"
        db.session.commit()
    # Asked for from an English page: the mail follows the account, not the page.
    assert client.post("/api/v2/auth/forgot-password", json={"email": user.email},
                       headers={"Accept-Language": "en"}).status_code == 202
    [mail] = mailbox.to(user.email)
    assert mail["Subject"] == "Réinitialiser votre mot de passe"
    body = mail.get_body(("plain",)).get_content()
    assert "mot de passe" in body and "password" not in body.replace("/reset-password", "")
