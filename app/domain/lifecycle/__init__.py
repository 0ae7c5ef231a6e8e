"""An account's life after sign-up: changing its address, leaving (and being erased), and taking
its data."""
