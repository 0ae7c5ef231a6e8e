"""The service itself: accounts, passwords, tokens and sessions. No Flask request objects here."""
