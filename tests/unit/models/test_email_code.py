"""app/models/email_code.py: the database itself keeps one live code per address and purpose, and
a link's hash names one code (accounts/email_codes.py relies on both)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import IntegrityError

from app.extensions import db
from app.models import EmailCode

AT = datetime(2026, 11, 28, 12, tzinfo=UTC)


def code(email_key: str, purpose: str, link_hash: str) -> EmailCode:
    return EmailCode(email_key=email_key, purpose=purpose, code_hash="c" * 64,
                     link_hash=link_hash, browser_hash=None, attempts=0, created_at=AT,
                     expires_at=AT + timedelta(minutes=10), used_at=None)


def test_one_code_per_address_and_purpose(app):
    with app.app_context():
        db.session.add_all([code("ada@example.com", EmailCode.SIGN_IN, "a" * 64),
                            code("ada@example.com", EmailCode.SIGN_UP, "b" * 64)])
        db.session.commit()  # another purpose is another code
        db.session.add(code("ada@example.com", EmailCode.SIGN_IN, "d" * 64))
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()


def test_a_link_names_one_code(app):
    with app.app_context():
        db.session.add(code("ada@example.com", EmailCode.SIGN_IN, "a" * 64))
        db.session.commit()
        db.session.add(code("bob@example.com", EmailCode.SIGN_IN, "a" * 64))
        with pytest.raises(IntegrityError):
            db.session.commit()
        db.session.rollback()
