"""Accounts: sign-up, passwords, addresses, recovery, and provider identities."""
