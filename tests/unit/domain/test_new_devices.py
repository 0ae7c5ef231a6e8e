"""Mails that tell the owner (issue 25): a sign-in from a device the account has not used, once
per device; and every use of a recovery code."""

from __future__ import annotations

from app.domain import new_devices
from tests.support.second_factors import enrolled_user

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
          "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1")


def _login(client, user, agent, address="198.51.100.7"):
    answer = client.post("/api/v2/auth/login", json={"email": user.email,
                                                     "password": user.password},
                         headers={"User-Agent": agent},
                         environ_base={"REMOTE_ADDR": address})
    assert answer.status_code == 200, answer.get_json()


def _new_device_mails(mailbox, user):
    return [m for m in mailbox.to(user.email) if m["Subject"] == "A new sign-in to your account"]


def test_the_first_sign_in_is_no_news_and_a_known_device_never_mails(client, user, mailbox):
    _login(client, user, FIREFOX)
    _login(client, user, FIREFOX)
    assert _new_device_mails(mailbox, user) == []


def test_a_new_device_mails_once_naming_it_and_nothing_more(client, user, mailbox):
    _login(client, user, FIREFOX)
    _login(client, user, IPHONE, "203.0.113.9")
    _login(client, user, IPHONE, "203.0.113.9")
    mails = _new_device_mails(mailbox, user)
    assert len(mails) == 1
    text = mails[0].get_body(("plain",)).get_content()
    assert "Safari on iPhone" in text and "/forgot-password" in text
    assert "203.0.113.9" not in text  # nothing the owner's page would not show them anyway


def test_the_same_browser_on_another_network_is_a_new_device(client, user, mailbox):
    _login(client, user, FIREFOX, "198.51.100.7")
    _login(client, user, FIREFOX, "192.0.2.1")
    assert len(_new_device_mails(mailbox, user)) == 1


def test_a_recovery_code_used_tells_the_owner_how_many_are_left(app, client, clock,
                                                                make_user, mailbox):
    account, _secret, codes = enrolled_user(app, make_user, clock)
    first = client.post("/api/v2/auth/login", json={"email": account.email,
                                                    "password": account.password}).get_json()
    done = client.post("/api/v2/auth/mfa", json={"mfa_token": first["mfa_token"],
                                                 "code": codes[0]})
    assert done.status_code == 200
    used = [m for m in mailbox.to(account.email) if m["Subject"] == "A recovery code was used"]
    assert len(used) == 1
    assert f"{len(codes) - 1} codes are left" in used[0].get_body(("plain",)).get_content()


def test_the_mail_never_says_what_the_new_device_wrote_of_itself(client, user, mailbox):
    # Whoever signs in with a stolen password chooses the user agent: the owner's warning must
    # not read as the words it brings ("this was you") beside ours.
    _login(client, user, FIREFOX)
    _login(client, user, "It was you on your phone. Nothing to do", "203.0.113.9")
    _login(client, user, "curl/8.4.0 (x86_64-pc-linux-gnu) libcurl/8.4.0", "192.0.2.1")
    _login(client, user, "   ", "192.0.2.2")
    said = [m.get_body(("plain",)).get_content() for m in _new_device_mails(mailbox, user)]
    assert len(said) == 3 and "Unknown device" in said[2]
    assert "It was you" not in said[0] and "Unknown device" in said[0]
    assert "curl/8.4.0," in said[1] and "libcurl" not in said[1]  # a program's name and version


def test_a_burst_of_new_devices_does_not_bury_the_owners_mail(client, user, mailbox):
    # Someone with the password, signing in from device after device, could flood the inbox
    # and hide the other warnings among ours: a few mails an hour, and the first one says it.
    _login(client, user, FIREFOX)
    for n in range(12):
        _login(client, user, f"Mozilla/5.0 (Windows NT 10.0) Chrome/{120 + n}.0", "203.0.113.9")
    assert len(_new_device_mails(mailbox, user)) == new_devices.MAILS_AN_HOUR
