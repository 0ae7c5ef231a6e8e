"""The client sites (and provider credentials) the in-process tests register with the app."""

# The OAuth tests' client site (tests/unit/web).
SYMBOLS_CALLBACK = "https://symbols.example/auth/callback"
OAUTH_SITES = {
    "symbols": {"redirect_uris": [SYMBOLS_CALLBACK, "http://127.0.0.1:8001/cb"],
                "origins": ["https://symbols.example"]},
}
# Placeholder credentials: enough to turn the providers on for starts that are never followed.
PROVIDERS = {
    "GOOGLE_CLIENT_ID": "google-id", "GOOGLE_CLIENT_SECRET": "google-secret",
    "GITHUB_CLIENT_ID": "github-id", "GITHUB_CLIENT_SECRET": "github-secret",
}

# The hosted pages' client sites (tests/unit/pages, tests/unit/domain/accounts).
SYMBOLS = "https://symbols.example/cb"
FOOTPRINTS = "https://footprints.example/cb"
PAGE_SITES = {"symbols": {"redirect_uris": [SYMBOLS], "origins": []},
              "footprints": {"redirect_uris": [FOOTPRINTS], "origins": []}}
