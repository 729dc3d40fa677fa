"""Postgres: SQLAlchemy models, Alembic migrations and the repositories every query goes through."""
