"""What every refusal of the domain (an AuthError, app/domain/errors.py) holds, whichever room
defines it: an HTTP status of an error, a code sites can match on, and words for people."""

from __future__ import annotations

import inspect
import re
from types import ModuleType

from app.domain.errors import AuthError

CODE = re.compile(r"[a-z][a-z0-9_]*")


def refusals_of(module: ModuleType) -> list[type[AuthError]]:
    """The refusals `module` defines (not those it imports)."""
    return [cls for _, cls in inspect.getmembers(module, inspect.isclass)
            if issubclass(cls, AuthError) and cls.__module__ == module.__name__]


def check_refusals(module: ModuleType) -> None:
    found = refusals_of(module)
    assert found, f"{module.__name__} defines no refusal"
    for cls in found:
        assert 400 <= cls.status < 600, cls
        assert CODE.fullmatch(cls.code), cls
        assert str(cls.detail).strip(), f"{cls.__name__} has no words for people"
