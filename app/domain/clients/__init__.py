"""Client sites: the registry of the sites and OpenID Connect clients we serve."""
