"""Addresses that carry another (issue 33, finding 10): in production a webhook or back-channel
endpoint whose address is 6to4, NAT64, IPv4-mapped or IPv4-compatible is judged by the IPv4
address it carries, and Teredo, local NAT64 and site-local addresses are never a site's. Through
each door: a literal in `sites set-webhook`, `sites add --backchannel-logout-uri` and
SVC_CLIENT_SITES at start, and a host name whose AAAA record is one (the rule that each
delivery asks again: tests/unit/domain/clients/test_registration.py)."""

from __future__ import annotations

import pytest

from app import create_app
from app.domain.clients.endpoints import UnsafeEndpoint, check_endpoint
from tests.support.cli import run as cli
from tests.support.settings import change_settings

pytestmark = pytest.mark.app_settings("events")

REFUSED = [
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254 (cloud metadata)
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:c0a8:1::1",  # 6to4 of 192.168.0.1
    "fec0::1",  # site-local
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b:1::a00:1",  # NAT64 for a local network (RFC 8215)
    "2001::1",  # Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo with a public server
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:a9fe:a9fe",
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "::8.8.8.8",
]
CARRIES_A_PUBLIC_ONE = ["2002:5db8:d822::1", "64:ff9b::5db8:d822", "::ffff:93.184.216.34"]


@pytest.fixture
def production(app):
    change_settings(app, ENV="production", checked=False)
    return app


@pytest.mark.parametrize("address", REFUSED)
def test_a_literal_is_refused_by_the_rule_and_the_cli(production, address):
    with production.app_context(), pytest.raises(UnsafeEndpoint):
        check_endpoint(f"https://[{address}]/hook")
    assert cli(production, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    hook = cli(production, "sites", "set-webhook", "notes", f"https://[{address}]/hook")
    assert hook.exit_code != 0 and "loopback, private or link-local" in hook.output
    logout = cli(production, "sites", "add", "other", "--redirect-uri",
                 "https://other.example/cb", "--backchannel-logout-uri",
                 f"https://[{address}]/logout")
    assert logout.exit_code != 0 and "loopback, private or link-local" in logout.output


@pytest.mark.parametrize("address", REFUSED)
def test_a_host_name_resolving_to_one_is_refused(production, dns, address):
    dns["hooks.example"] = address
    with production.app_context(), pytest.raises(UnsafeEndpoint):
        check_endpoint("https://hooks.example/hook")


@pytest.mark.parametrize("address", CARRIES_A_PUBLIC_ONE)
def test_one_that_carries_a_public_address_is_taken(production, dns, address):
    dns["hooks.example"] = address
    with production.app_context():
        assert check_endpoint(f"https://[{address}]/hook")
        assert check_endpoint("https://hooks.example/hook")


@pytest.mark.parametrize("address", ["2002:7f00:1::", "2002:a9fe:a9fe::1", "fec0::1"])
def test_the_start_refuses_one_in_the_sites_setting(monkeypatch, tmp_path, address):
    monkeypatch.setenv("SVC_ENV", "production")
    monkeypatch.setenv("SVC_SECRET_KEY", "x" * 64)
    monkeypatch.setenv("SVC_PUBLIC_URL", "https://auth.example")
    monkeypatch.setenv("SVC_MAIL_URL", f"file://{tmp_path / 'mail'}")
    monkeypatch.setenv("SVC_CLIENT_SITES", '{"notes": {"redirect_uris": '
                       '["https://notes.example/cb"], "backchannel_logout_uri": '
                       f'"https://[{address}]/logout"}}}}')
    with pytest.raises(RuntimeError, match="SVC_CLIENT_SITES"):
        create_app({"INSTANCE_PATH": str(tmp_path)})
