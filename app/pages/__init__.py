"""Hosted pages: sign-up, sign-in, recovery and the account, server-rendered."""

from app.pages import account, auth, link, passkeys, second_factor  # noqa: F401  (their routes register on bp)
from app.pages.blueprint import bp, error_page

__all__ = ["bp", "error_page"]
