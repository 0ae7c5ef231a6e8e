"""The OpenID Connect provider's rules: client sites, authorization codes, pushed requests."""
