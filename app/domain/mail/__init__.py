"""Mail: the outbox, its jobs and the messages."""
