"""Times as the API takes them: RFC 3339 text with a zone offset, refused naming the field otherwise."""

from __future__ import annotations

from datetime import UTC, datetime

from contracts.errors import InvalidInput

__all__ = ["parse_time"]


def parse_time(value: object, field: str) -> datetime:
    """The time `value` says, in UTC; a 422 naming `field` for anything else (no offset, not a time)."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field}: must be an RFC 3339 time", field=field)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"{field}: must be an RFC 3339 time", field=field) from exc
    if parsed.tzinfo is None:
        raise InvalidInput(f"{field}: needs a time zone offset", field=field)
    try:
        return parsed.astimezone(UTC)
    except OverflowError as exc:
        raise InvalidInput(f"{field}: must be an RFC 3339 time", field=field) from exc
