"""accounts.check_name: the one rule for a person's name, whatever the door (the account page,
the admin API, the console), as the API's schemas and the forms say it."""

from __future__ import annotations

import pytest

from app.domain.accounts import accounts
from app.domain.errors import InvalidBody


@pytest.mark.parametrize("name", ["x" * 201, "Ada\x00", "Ada\u2066", "Ada\r\nB", "\x9bAda"])
def test_a_name_out_of_the_rule_points_at_full_name(name):
    with pytest.raises(InvalidBody) as refused:
        accounts.check_name(name)
    assert refused.value.errors[0]["pointer"] == "#/full_name"


def test_a_name_is_kept_trimmed():
    assert accounts.check_name("  Ada  Lovelace ") == "Ada  Lovelace"
    assert accounts.check_name("x" * 200) == "x" * 200
    assert accounts.check_name("Zoë Ñandú 李") == "Zoë Ñandú 李"
