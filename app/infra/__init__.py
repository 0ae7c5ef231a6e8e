"""The machinery under the domain's rules: key files, ECDSA signatures' one form, the
live-session lookup with its Redis cache, the mail senders. Nothing here decides who may do what."""
