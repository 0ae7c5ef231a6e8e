"""Database plumbing under the models and the domain: write transactions, and the speed-ups
that bypass the ORM on the hot paths."""
