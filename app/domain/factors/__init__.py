"""Second factors: authenticator apps, recovery codes, passkeys, and the pending sign-in."""
