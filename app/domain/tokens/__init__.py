"""Tokens: access JWTs, signing keys, opaque secrets."""
