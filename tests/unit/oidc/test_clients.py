"""Client sites as OAuth / OpenID Connect clients (issue 15, item 1): the registry's defaults, a
confidential client's secret (shown once, stored hashed, rotated from the CLI)."""

import pytest

from app.domain.clients import sites
from app.domain.tokens import tokens
from app.extensions import db
from app.models import ClientSite
from tests.support.cli import run as _cli
from tests.support.settings import change_settings

pytestmark = pytest.mark.app_settings("oidc")


def test_a_site_registered_as_before_is_a_first_party_public_client(app):
    change_settings(app, CLIENT_SITES={"symbols": {"redirect_uris": ["https://symbols.example/cb"],
                                                   "origins": []}})
    _cli(app, "sites", "add", "footprints", "--redirect-uri", "https://footprints.example/cb")
    with app.app_context():
        for name in ("symbols", "footprints"):
            site = sites.registered_site(name)
            assert site is not None and site.client_id == name
            assert site.is_public and site.first_party and site.client_secret_hash is None
            assert site.allowed_scopes == ("openid", "email", "profile")
            assert site.post_logout_redirect_uris == site.redirect_uris


def test_a_confidential_client_gets_its_secret_once_stored_hashed_and_rotated(app):
    added = _cli(app, "sites", "add", "books", "--redirect-uri", "https://books.example/cb",
                 "--confidential", "client_secret_basic", "--third-party",
                 "--post-logout-redirect-uri", "https://books.example/bye",
                 "--scope", "openid", "--scope", "email")
    assert added.exit_code == 0, added.output
    secret = added.output.split("client_secret ")[1].split()[0]
    assert len(secret) >= 43
    with app.app_context():
        row = db.session.get(ClientSite, "books")
        assert row.client_secret_hash == tokens.hash_secret(secret)
        assert secret not in str(row.__dict__)
        site = sites.registered_site("books")
        assert not site.is_public and site.auth_method == "client_secret_basic"
        assert not site.first_party and site.allowed_scopes == ("openid", "email")
        assert site.post_logout_redirect_uris == ("https://books.example/bye",)
        assert site.check_secret(secret) and not site.check_secret(secret + "x")
    assert secret not in _cli(app, "sites", "list").output

    rotated = _cli(app, "sites", "rotate-secret", "books")
    assert rotated.exit_code == 0, rotated.output
    new_secret = rotated.output.split("client_secret ")[1].split()[0]
    with app.app_context():
        site = sites.registered_site("books")
        assert site.check_secret(new_secret) and not site.check_secret(secret)
    # `sites update` keeps the secret it has; a second `sites add` is refused.
    _cli(app, "sites", "update", "books", "--confidential", "client_secret_basic")
    again = app.test_cli_runner().invoke(args=["sites", "add", "books", "--redirect-uri",
                                               "https://books.example/cb"])
    assert again.exit_code != 0 and "sites update books" in again.output
    with app.app_context():
        assert sites.registered_site("books").check_secret(new_secret)


def test_the_cli_refuses_what_no_client_may_be(app):
    public = _cli(app, "sites", "add", "pub", "--redirect-uri", "https://pub.example/cb")
    assert public.exit_code == 0 and "client_secret" not in public.output
    assert _cli(app, "sites", "rotate-secret", "pub").exit_code != 0
    no_openid = _cli(app, "sites", "add", "x", "--redirect-uri", "https://x.example/cb",
                     "--scope", "email")
    assert no_openid.exit_code != 0 and "openid" in no_openid.output
