"""Stand-ins for the identity providers svc-auth signs people in with: Google (OIDC) and GitHub."""
