"""Request bodies read under limits before anything parses them, and JSON parsed under Lethe's own rules.

`BodyLimit` reads the whole body first: a declared `Content-Length` over the limit is refused before a byte is
read, the stream is capped as it arrives (a body without a length, or lying about it, cannot grow past the
limit), and a client that stops sending (a `Content-Length` larger than what it sends) gets 408 after the idle
time instead of holding the connection. `parse_json` then refuses what JSON allows but Lethe cannot keep:
NaN and Infinity, lone UTF-16 surrogates, and nesting deeper than `MAX_JSON_DEPTH`.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from contracts.errors import InvalidInput
from service.encoding import encode

__all__ = ["MAX_JSON_DEPTH", "BodyLimit", "parse_json"]

# Deep enough for any provider request (tool schemas nest a few levels), shallow enough to walk safely.
MAX_JSON_DEPTH = 64


def _error(status: int, kind: str, message: str) -> tuple[int, bytes]:
    return status, encode({"error": {"type": kind, "message": message, "field": "body"}})


class BodyLimit:
    """ASGI middleware: the body read whole, capped at `max_bytes`, with `idle_seconds` between chunks."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, idle_seconds: float) -> None:
        self.app, self.max_bytes, self.idle_seconds = app, max_bytes, idle_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        refusal, body = await self._read(scope, receive)
        if refusal is not None:
            status, payload = refusal
            await send({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": payload, "more_body": True})
            if status == 413:
                await self._drain(receive)
            await send({"type": "http.response.body", "body": b""})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only a disconnect can come

        await self.app(scope, replay, send)

    async def _drain(self, receive: Receive) -> None:
        """The rest of a refused body read and dropped (up to four times the limit): the answer is already sent,
        but closing on unread bytes resets the connection, and a client still sending would never read it."""
        drained = 0
        while drained <= 4 * self.max_bytes:
            try:
                message = await asyncio.wait_for(receive(), timeout=self.idle_seconds)
            except TimeoutError:
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                return
            drained += len(message.get("body", b""))

    async def _read(self, scope: Scope, receive: Receive) -> tuple[tuple[int, bytes] | None, bytes]:
        limit = self.max_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                return _error(422, "invalid_request", "Content-Length is not a number"), b""
            if int(declared) > limit:
                return _error(413, "payload_too_large",
                              f"the body is {int(declared)} bytes; the limit is {limit} (LETHE_MAX_BODY_BYTES)"), b""
        chunks, size = [], 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=self.idle_seconds)
            except TimeoutError:
                return _error(408, "request_timeout",
                              f"the body stopped arriving for {self.idle_seconds:g} s (LETHE_BODY_IDLE_SECONDS)"), b""
            if message["type"] == "http.disconnect":
                return _error(422, "invalid_request", "the client went away before sending the whole body"), b""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return _error(413, "payload_too_large",
                              f"the body is over the limit of {limit} bytes (LETHE_MAX_BODY_BYTES)"), b""
            chunks.append(chunk)
            if not message.get("more_body", False):
                return None, b"".join(chunks)


def _refuse_constant(name: str) -> Any:
    raise InvalidInput(f"{name} is not a JSON number Lethe accepts; send a finite number or a string", field="body")


def _finite(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise InvalidInput(f"{text} is too large for a JSON number Lethe accepts", field="body")
    return number


def parse_json(raw: bytes) -> Any:
    """The body as JSON, or `InvalidInput` naming where it goes wrong."""
    try:
        value = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite)
    except RecursionError as exc:
        raise InvalidInput(f"the body nests deeper than {MAX_JSON_DEPTH} levels", field="body") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput("the body is not UTF-8", field="body") from exc
    except ValueError as exc:
        raise InvalidInput(f"the body is not valid JSON: {exc}", field="body") from exc
    # Only a `\\uD8xx`-style escape can make a lone surrogate: the common body skips that check.
    _check(value, texts=b"\\ud" in raw or b"\\uD" in raw)
    return value


def _path(trail: _Trail | None) -> str:
    parts: list[str | int] = []
    while trail is not None:
        parts.append(trail[1])
        trail = trail[0]
    out = ""
    for part in reversed(parts):
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


# (parent trail, key): the way to a node, kept as links so a path is only built for an error.
_Trail = tuple[Any, str | int]


def _check_text(text: str, trail: _Trail | None) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput("a string holds a lone UTF-16 surrogate, which is not Unicode text",
                           field=_path(trail)) from exc


def _check(value: Any, *, texts: bool) -> None:
    """Depth (and, when the body could hold one, lone surrogates), iteratively: deep nesting is what would
    break a recursive walk."""
    stack: list[tuple[Any, int, _Trail | None]] = [(value, 0, None)]
    while stack:
        node, depth, trail = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise InvalidInput(f"the body nests deeper than {MAX_JSON_DEPTH} levels", field=_path(trail))
        if isinstance(node, dict):
            for key, child in node.items():
                if texts:
                    _check_text(key, trail)
                stack.append((child, depth + 1, (trail, key)))
        elif isinstance(node, list):
            stack.extend((child, depth + 1, (trail, i)) for i, child in enumerate(node))
        elif texts and isinstance(node, str):
            _check_text(node, trail)
