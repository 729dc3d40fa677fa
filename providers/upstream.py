"""The agent's own provider, called by the proxy through the `openai` SDK: JSON or streamed events, and its
errors mapped at this one seam into `UpstreamError` carrying the status, headers and body it sent.

The SDK does not retry here (`max_retries=0`): a 429 goes back to the agent at once with its Retry-After, and
the agent's own client decides, with the same Idempotency-Key, whether to try again.

An Anthropic-compatible provider is called through the same client with its own headers (`anthropic_headers`):
the key as `x-api-key` instead of `Authorization`, and the agent's `anthropic-version` and `anthropic-beta`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import openai
import orjson
from openai import AsyncOpenAI, AsyncStream, Omit

from contracts.errors import UpstreamError

__all__ = ["ANTHROPIC_VERSION", "Upstream", "UpstreamPool", "UpstreamTarget", "anthropic_headers"]

# The version Anthropic's API is asked for when the agent names none (the one its SDKs send).
ANTHROPIC_VERSION = "2023-06-01"

# Headers of an error answer worth handing back: what the body is, and when to come back.
_KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-request-id")


@dataclass(frozen=True)
class UpstreamTarget:
    base_url: str
    api_key: str | None

    def __repr__(self) -> str:  # never the key, whatever prints this
        return f"UpstreamTarget(base_url={self.base_url!r}, api_key={'***' if self.api_key else None})"


def _error_body(kind: str, message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": kind}}).encode()


def _mapped(exc: Exception, timeout: float) -> UpstreamError:
    if isinstance(exc, openai.APIStatusError):
        response = exc.response
        headers = {k: v for k, v in response.headers.items()
                   if k.lower() in _KEPT_HEADERS or k.lower().startswith("x-ratelimit-")}
        try:
            body = response.content
        except Exception:  # noqa: BLE001 - a streamed error whose body was not read: the SDK's reading of it
            body = json.dumps({"error": exc.body if isinstance(exc.body, dict) else {"message": exc.message}}).encode()
        return UpstreamError(f"the upstream answered {exc.status_code}", status=exc.status_code, body=body,
                             headers=headers)
    if isinstance(exc, openai.APITimeoutError):
        return UpstreamError("the upstream timed out", status=504, body=_error_body(
            "upstream_timeout", f"the upstream did not answer within {timeout:g} s; retry with the same "
                                "Idempotency-Key"))
    if isinstance(exc, openai.APIConnectionError):
        return UpstreamError("the upstream connection failed", status=502, body=_error_body(
            "upstream_unreachable", "the connection to the upstream failed or was dropped; retry with the same "
                                    "Idempotency-Key"))
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        error = exc.body if isinstance(exc.body, dict) else {"message": exc.message}
        return UpstreamError("the upstream's stream failed", status=502, body=json.dumps({"error": error}).encode())
    raise exc


def _encoded(body: dict[str, Any]) -> bytes:
    """The body as JSON bytes, which the SDK sends as they are: orjson is several times faster than the SDK's own
    encoder on a long conversation, and this sits between decorate and the first token."""
    try:
        return orjson.dumps(body)
    except TypeError:  # integers past 64 bits
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


# Newer SDKs take raw bytes as `content`; older ones as `body`.
_RAW = "content" if "content" in inspect.signature(AsyncOpenAI.post).parameters else "body"


def _payload(body: dict[str, Any], headers: dict[str, Any] | None) -> dict[str, Any]:
    payload: dict[str, Any] = {_RAW: _encoded(body)}
    if headers:
        payload["options"] = {"headers": headers}
    return payload


def anthropic_headers(api_key: str | None, *, version: str | None, beta: str | None) -> dict[str, Any]:
    """What an Anthropic-compatible provider reads: its key as `x-api-key` (no `Authorization`, which it would
    read as an OAuth token), the API version, and any beta features the agent asked for."""
    headers: dict[str, Any] = {"Authorization": Omit(), "x-api-key": api_key or "unused",
                               "anthropic-version": version or ANTHROPIC_VERSION}
    if beta:
        headers["anthropic-beta"] = beta
    return headers


class Upstream:
    """One provider (base URL and key): a JSON call, or a streamed one yielding each event's JSON."""

    def __init__(self, target: UpstreamTarget, *, timeout: float) -> None:
        self.timeout = timeout
        self._api_key = target.api_key
        self._client = AsyncOpenAI(base_url=target.base_url, api_key=target.api_key or "unused",
                                   timeout=timeout, max_retries=0)

    @property
    def api_key(self) -> str | None:
        return self._api_key

    async def create(self, path: str, body: dict[str, Any], *, headers: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
        try:
            reply = await self._client.post(path, cast_to=object, **_payload(body, headers))
        except openai.OpenAIError as exc:
            raise _mapped(exc, self.timeout) from exc
        if not isinstance(reply, dict):
            raise UpstreamError("the upstream sent no JSON object", status=502,
                                body=_error_body("upstream_invalid", "the upstream's answer is not a JSON object"))
        return reply

    async def stream(self, path: str, body: dict[str, Any], *, headers: dict[str, Any] | None = None
                     ) -> AsyncIterator[dict[str, Any]]:
        try:
            events = await self._client.post(path, cast_to=object, stream=True, stream_cls=AsyncStream[object],
                                             **_payload(body, headers))
            async with events:
                async for event in events:
                    if isinstance(event, dict):
                        yield event
        except openai.OpenAIError as exc:
            raise _mapped(exc, self.timeout) from exc

    async def close(self) -> None:
        await self._client.close()


class UpstreamPool:
    """Clients kept per provider and key, so calls reuse their connections; the least recent goes first."""

    def __init__(self, *, timeout: float, size: int = 256) -> None:
        self.timeout, self.size = timeout, size
        self._clients: OrderedDict[str, Upstream] = OrderedDict()

    async def get(self, target: UpstreamTarget) -> Upstream:
        # A digest, so the pool never holds a key in the clear as a dictionary key.
        name = hashlib.sha256(f"{target.base_url}\0{target.api_key or ''}".encode()).hexdigest()
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = Upstream(target, timeout=self.timeout)
        self._clients.move_to_end(name)
        while len(self._clients) > self.size:
            # Not closed here: a call may still be using it; its connections close when it is collected.
            self._clients.popitem(last=False)
        return client

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
