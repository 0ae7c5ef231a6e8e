"""What operators and service clients do to accounts (the admin API, the console, the CLI)."""
