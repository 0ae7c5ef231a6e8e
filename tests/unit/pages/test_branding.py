"""Pages that belong to the site (issue 25, part 1): a site's name, logo, colour and links,
checked when registered and served from our own origin; and the service's own front page."""

from __future__ import annotations

import struct
import zlib

import pytest

from app.domain.clients import branding
from app.domain.errors import InvalidBody
from tests.support.cli import run as cli
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("pages")


def png(width: int = 2, height: int = 2, trailing: bytes = b"") -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x00\x00\xff" * min(width, 4)
                                    for _ in range(min(height, 4))))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b"") + trailing)


SVG_OK = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
          b'<rect width="10" height="10" fill="#123456"/></svg>')


@pytest.fixture
def branded(app, tmp_path):
    logo = tmp_path / "logo.png"
    logo.write_bytes(png())
    added = cli(app, "sites", "add", "books", "--redirect-uri", "https://books.example/cb",
                "--display-name", "Book Club", "--accent-color", "#0b6e4f",
                "--logo", str(logo), "--home-url", "https://books.example/",
                "--privacy-url", "https://books.example/privacy")
    assert added.exit_code == 0, added.output
    return "books"


def test_a_page_from_a_site_shows_its_name_logo_colour_and_the_way_back(client, branded):
    page = client.get("/login", query_string={"callback": "books"})
    assert "Sign in to continue to Book Club" in page.text
    assert 'src="/sites/books/logo"' in page.text
    assert 'href="/sites/books/theme.css"' in page.text
    assert 'href="https://books.example/"' in page.text
    theme = client.get("/sites/books/theme.css")
    assert theme.mimetype == "text/css" and "--accent: #0b6e4f" in theme.text
    logo = client.get("/sites/books/logo")
    assert logo.mimetype == "image/png" and logo.data == png()
    assert logo.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in logo.headers["Content-Security-Policy"]
    assert "Book Club" in client.get("/signup", query_string={"callback": "books"}).text


def test_a_page_of_the_service_itself_names_no_site(client, branded):
    assert "Continue to" not in client.get("/login").text
    assert client.get("/sites/nobody/logo").status_code == 404


def test_update_changes_only_what_it_is_given_and_add_refuses_a_name(app, branded):
    assert cli(app, "sites", "update", "books", "--accent-color", "#1d3557").exit_code == 0
    shown = cli(app, "sites", "show", "books").output
    assert "Book Club" in shown and "#1d3557" in shown and "image/png" in shown
    again = cli(app, "sites", "add", "books", "--redirect-uri", "https://books.example/cb")
    assert again.exit_code != 0 and "sites update books" in again.output
    assert "Book Club" in cli(app, "sites", "show", "books").output


@pytest.mark.parametrize(("logo", "why"), [
    (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "script"),
    (b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect/></svg>', "onload"),
    (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://www.w3.org/1999/xlink">'
     b'<image x:href="https://evil.example/x.png"/></svg>', "image"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill:url(https://e.example/a)"/>'
     b'</svg>', "style"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>hi</p></foreignObject></svg>',
     "foreignobject"),
    (b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg>&x;</svg>', "DTD"),
    (png(width=40_000, height=40_000), "pixels"),
    (png(trailing=b"<script>alert(1)</script>"), "after its end"),
    (b"GIF89a" + b"\x00" * 20, "PNG, WebP or SVG"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 200_000, "KiB"),
])
def test_a_malicious_or_wrong_logo_is_refused(logo, why):
    with pytest.raises(InvalidBody) as refused:
        branding.checked_logo(logo)
    assert why.lower() in refused.value.detail.lower()


def test_a_clean_svg_and_png_are_kept():
    assert branding.checked_logo(SVG_OK) == (branding.SVG, SVG_OK)
    assert branding.checked_logo(png())[0] == branding.PNG


@pytest.mark.parametrize("colour", ["#ffff00", "#cccccc", "#ffffff", "red", "#12345", "#gg0000",
                                    "#0b6e4f\n"])
def test_a_colour_that_fails_contrast_or_form_is_refused(app, colour):
    result = cli(app, "sites", "add", "pale", "--redirect-uri", "https://pale.example/cb",
                 "--accent-color", colour)
    assert result.exit_code != 0
    assert "pale" not in cli(app, "sites", "list").output


def test_the_front_page_is_the_way_in_or_the_account(app, client, user):
    landing = client.get("/")
    assert landing.status_code == 200 and 'href="/login"' in landing.text
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert client.get("/").headers["Location"].endswith("/account")


def test_a_reset_mail_from_a_site_names_it(client, user, branded, mailbox):
    submit(client, "/forgot-password?callback=books", {"email": user.email})
    mail = mailbox.to(user.email)[-1]
    assert "from Book Club" in mail.get_body(("plain",)).get_content()


def test_the_device_list_names_the_site_a_session_was_opened_for(client, user, branded):
    from urllib.parse import parse_qs, urlsplit
    answer = submit(client, "/login?callback=books", {"email": user.email,
                                                      "password": user.password})
    code = parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]
    exchanged = client.post("/api/v2/auth/exchange-code", json={"code": code,
                                                               "provider": "password"})
    assert exchanged.status_code == 200, exchanged.get_json()
    assert "for Book Club" in client.get("/account").text


def test_the_consent_page_of_a_third_party_client_is_in_its_looks(app, client, user, tmp_path):
    """Its name, logo and colour in the page's banner, as on every page from a site (an OpenID
    Connect request's redirect_uri is no handoff target: the client_id names the site)."""
    from tests.support.oidc import authorize_query, pkce

    logo = tmp_path / "logo.svg"
    logo.write_bytes(SVG_OK)
    added = cli(app, "sites", "add", "diary", "--redirect-uri", "https://diary.example/cb",
                "--third-party", "--display-name", "Dear Diary", "--accent-color", "#6d28d9",
                "--logo", str(logo), "--privacy-url", "https://diary.example/privacy")
    assert added.exit_code == 0, added.output
    submit(client, "/login", {"email": user.email, "password": user.password})
    page = client.get("/oauth2/authorize", query_string=authorize_query(
        "diary", "https://diary.example/cb", verifier=pkce()))
    assert page.status_code == 200 and "Allow Dear Diary to sign you in?" in page.text
    assert "Continue to <strong>Dear Diary</strong>" in page.text
    assert 'href="/sites/diary/theme.css"' in page.text
    assert page.text.count('src="/sites/diary/logo"') == 1
    unknown = client.get("/oauth2/authorize", query_string=authorize_query(
        "nobody", "https://diary.example/cb", verifier=pkce()))
    assert "Continue to" not in unknown.text
