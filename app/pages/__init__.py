"""Hosted pages: sign-up, sign-in, recovery and the account, server-rendered."""

from app.pages import (  # noqa: F401  (their routes register on bp)
    account,
    account_life,
    auth,
    branding,
    email_code,
    language,
    link,
    own_scripts,
    passkey_signup,
    passkeys,
    second_factor,
    sign_out,
    times,
)
from app.pages.blueprint import bp, error_page

__all__ = ["bp", "error_page"]
