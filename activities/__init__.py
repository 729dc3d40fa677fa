"""Temporal activities: thin and idempotent, by ids, calling engine + store + providers."""
