"""The test accounts' password and what a test knows of an account it made."""

from __future__ import annotations

from dataclasses import dataclass

PASSWORD = "correct horse battery staple"


@dataclass
class Account:
    email: str
    password: str
    id: str
