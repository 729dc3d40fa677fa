"""Lethe's whole error tree, in one place so every layer raises the same classes.

    LetheError
     ├── InvalidInput            bad input; names the field (422)
     ├── Unauthorized            missing or wrong key (401)
     ├── NotFound                no such thing for this tenant (404)
     ├── Conflict                an idempotency key reused with another body (409)
     ├── PayloadTooLarge         body over the configured limit (413)
     │    └── OverCeiling        the turn in progress alone passes the ceiling (413, names the limit)
     ├── ServiceUnavailable      Postgres or Temporal unreachable (503, Retry-After)
     ├── IllegalTransition       an episode asked to move where its state forbids
     └── ProviderError           a model backend failed (timeout, HTTP error, junk output)
          └── UpstreamError      the agent's own provider, behind the proxy, answered with an error

It lives in `contracts/` because every layer may import it and it imports nothing of the project.
"""

from __future__ import annotations

__all__ = [
    "ConcurrentChange",
    "Conflict",
    "IllegalTransition",
    "InvalidInput",
    "LetheError",
    "NotFound",
    "OverCeiling",
    "PayloadTooLarge",
    "ProviderError",
    "RateLimited",
    "ServiceUnavailable",
    "Unauthorized",
    "UpstreamError",
]


class LetheError(Exception):
    """Base of every error Lethe raises on purpose."""

    type: str = "lethe_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(LetheError):
    """The caller sent something Lethe cannot take; `field` says which part."""

    type = "invalid_request"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class Unauthorized(LetheError):
    """No credentials, or credentials Lethe does not know."""

    type = "unauthorized"


class NotFound(LetheError):
    """Nothing by that id for this tenant (another tenant's memory looks the same)."""

    type = "not_found"


class Conflict(LetheError):
    """An idempotency key already answered a different request."""

    type = "conflict"


class PayloadTooLarge(LetheError):
    """The request body is over the configured limit."""

    type = "payload_too_large"


class OverCeiling(PayloadTooLarge):
    """Even with every earlier episode gone, the request would pass the ceiling: what no fade can shrink
    (instructions, tools) and the turn in progress are too large on their own."""

    type = "over_ceiling"

    def __init__(self, message: str, *, field: str, ceiling: int, tokens: int) -> None:
        super().__init__(message)
        self.field = field
        self.ceiling = ceiling
        self.tokens = tokens


class ServiceUnavailable(LetheError):
    """A backing service (Postgres, Temporal) cannot be reached right now."""

    type = "service_unavailable"

    def __init__(self, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConcurrentChange(ServiceUnavailable):
    """Postgres broke a deadlock or a serialization conflict with another transaction on the same rows (the
    memory's lane, say) by failing this one: nothing of it was kept, and the same call again goes through."""

    def __init__(self, message: str = "a concurrent change of the same memory collided with this call; nothing "
                                      "was changed, send it again", *, retry_after: int = 1) -> None:
        super().__init__(message, retry_after=retry_after)


class RateLimited(LetheError):
    """The tenant is over its request rate or its concurrent decorates; try again after `retry_after` seconds."""

    type = "rate_limited"

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class IllegalTransition(LetheError):
    """An episode was asked to change state in a way the mechanism forbids."""

    type = "illegal_transition"


class ProviderError(LetheError):
    """A model backend failed: timeout, HTTP error or output that is not what was asked."""

    type = "provider_error"


class UpstreamError(ProviderError):
    """The agent's provider, called by the proxy, failed: its status, headers and body go back as they came."""

    type = "upstream_error"

    def __init__(self, message: str, *, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.body, self.headers = status, body, headers or {}
