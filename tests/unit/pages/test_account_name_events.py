"""A person's own name change on the account page is an account event like an operator's: every
first-party site receives `user.updated` with the new name, a third-party client only under its
profile consent (as tests/unit/domain/test_events_consented_bodies.py holds for the admin API's
change)."""

from __future__ import annotations

import pytest

from tests.support.pages import submit
from tests.unit.domain.test_events_consented_bodies import consent, delivered, of_type

pytestmark = pytest.mark.app_settings("events")


def _rename(client, user, name):
    signed_in = submit(client, "/login", {"email": user.email, "password": user.password})
    assert signed_in.status_code == 302
    return submit(client, "/account/name", {"full_name": name}, token_from="/account")


def test_the_sites_receive_the_name_the_person_chose(app, client, user, receiver):
    consent(app, user, "openid profile")
    assert _rename(client, user, "  Ada King  ").status_code == 302
    symbols, outsider = delivered(app, receiver)
    told = {"user_id": user.id, "changed": ["full_name"], "full_name": "Ada King"}
    assert of_type(symbols, "user.updated") == [told]
    assert of_type(outsider, "user.updated") == [told]


def test_without_profile_consent_a_third_party_hears_nothing_of_it(app, client, user, receiver):
    consent(app, user, "openid")
    _rename(client, user, "Ada King")
    symbols, outsider = delivered(app, receiver)
    assert of_type(symbols, "user.updated") and of_type(outsider, "user.updated") == []
    assert "Ada King" not in repr(outsider)


def test_a_refused_or_unchanged_name_sends_no_event(app, client, user, receiver):
    assert _rename(client, user, "Ada\u202eevil").status_code == 422
    assert submit(client, "/account/name", {"full_name": "Ada"},
                  token_from="/account").status_code == 302
    symbols, _ = delivered(app, receiver)
    assert of_type(symbols, "user.updated") == []
