"""The one seam between Lethe and the `openai` SDK: client construction and exception mapping.

Every OpenAI-compatible backend builds its client here and makes its calls inside `openai_errors()`, so an SDK
exception reaches the rest of Lethe only as a `ProviderError`, chained `from` the original.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai

from contracts.errors import ProviderError

__all__ = ["make_client", "openai_errors"]


def make_client(
    *, base_url: str, api_key: str | None, timeout_seconds: float, max_retries: int
) -> openai.AsyncOpenAI:
    """An async client; the SDK retries 408/409/429/5xx and connection errors with exponential backoff."""
    # Local servers take any key; the SDK refuses to start without one.
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "unused",
        timeout=httpx.Timeout(timeout_seconds, connect=min(timeout_seconds, 10.0)),
        max_retries=max_retries,
    )


@contextmanager
def openai_errors(what: str) -> Iterator[None]:
    """Map the SDK's exceptions to `ProviderError`, saying which call failed and how."""
    try:
        yield
    except openai.APITimeoutError as exc:
        raise ProviderError(f"{what}: timed out") from exc
    except openai.APIStatusError as exc:
        raise ProviderError(f"{what}: HTTP {exc.status_code}") from exc
    except openai.APIConnectionError as exc:
        raise ProviderError(f"{what}: cannot connect ({exc.__cause__ or exc})") from exc
    except openai.OpenAIError as exc:
        raise ProviderError(f"{what}: {exc}") from exc
