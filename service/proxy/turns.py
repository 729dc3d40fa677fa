"""One proxied call: decorate, call the agent's provider, report, and answer in the provider's own shape.

When the model's reply was only the note call, the gateway decorates and calls again on its own (at most
`MAX_CALLS` calls in all), so the agent sees one ordinary answer. Each inner decorate and report has its own
idempotency key derived from the agent's, so a retry with the same Idempotency-Key after a timeout or a dropped
stream reuses the stored turn and stores nothing twice; a retry after success gets the first answer back.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from contracts.errors import InvalidInput, LetheError, UpstreamError
from engine.anthropic_stream import MessagesStreamFilter
from engine.recognition import content_hash
from engine.replies import note_calls
from engine.streams import ChatStreamFilter, ResponsesStreamFilter, without_note_tool
from providers.upstream import Upstream, anthropic_headers
from service.clock import Clock
from service.context import HotPath
from service.encoding import encode
from service.proxy import seam
from service.relay import OutboxRelay
from store.repositories import idempotency

__all__ = ["MAX_CALLS", "PATHS", "ProxyCall"]

PATHS = {"chat_completions": "/chat/completions", "responses": "/responses", "messages": "/messages"}
# The first call and up to two continuations after replies that were only the note call.
MAX_CALLS = 3
_DONE = b"data: [DONE]\n\n"
# Of the 200 characters an idempotency key holds, what the agent's may keep before `:decorate2` is added.
_KEY_ROOM = 180


def sse(event: dict[str, Any], *, named: bool) -> bytes:
    head = f"event: {event.get('type', 'message')}\n".encode() if named else b""
    return head + b"data: " + encode(event) + b"\n\n"


@dataclass
class ProxyCall:
    hot_path: HotPath
    relay: OutboxRelay
    upstream: Upstream
    tenant_id: str
    memory_id: str
    clock: Clock
    shape: str  # "chat_completions", "responses" or "messages"
    body: dict[str, Any]
    idempotency_key: str | None
    # What the agent asked of an Anthropic-compatible provider: its API version and beta features.
    anthropic_version: str | None = None
    anthropic_beta: str | None = None
    user_id: str | None = None  # X-Lethe-User: the person the memory belongs to
    sent: list[bytes] = field(default_factory=list)
    # How long the first decorate took, for the answer's Server-Timing (what the proxy adds before the model).
    decorate_ms: float | None = None
    # From sending the model call to the first event worth showing, as the gateway saw it.
    upstream_ms: float | None = None

    @property
    def headers(self) -> dict[str, Any] | None:
        """Headers the upstream call carries besides the SDK's: Anthropic's API reads its key from `x-api-key`,
        and the agent's `anthropic-version` and `anthropic-beta` go on."""
        if self.shape != "messages":
            return None
        return anthropic_headers(self.upstream.api_key, version=self.anthropic_version, beta=self.anthropic_beta)

    # --- idempotency of the whole call (only with an explicit key: the inner calls cover the rest) ---

    @property
    def _endpoint(self) -> str:
        return "proxy_" + ("chat" if self.shape == "chat_completions" else self.shape)

    async def replay(self) -> bytes | None:
        if self.idempotency_key is None:
            return None
        async with self.hot_path.db.session() as session:
            found = await idempotency.find_replay(
                session, tenant_id=self.tenant_id, memory_id=self.memory_id, endpoint=self._endpoint,
                key=self.idempotency_key, body_hash=content_hash(self.body))
        return found.body if found else None

    async def _remember(self, answer: bytes) -> None:
        if self.idempotency_key is None:
            return
        async with self.hot_path.db.session() as session, session.begin():
            idempotency.remember_answer(session, tenant_id=self.tenant_id, memory_id=self.memory_id,
                                        endpoint=self._endpoint, key=self.idempotency_key,
                                        body_hash=content_hash(self.body), body=answer)

    # --- the inner decorate and report ---

    def _key(self, kind: str, n: int) -> str | None:
        if not self.idempotency_key:
            return None
        # The agent's key may take all 200 characters a key holds: a long one is shortened to its digest.
        base = self.idempotency_key
        if len(base) > _KEY_ROOM:
            base = "sha256:" + hashlib.sha256(base.encode()).hexdigest()
        return f"{base}:{kind}{n}"

    async def _decorate(self, n: int) -> dict[str, Any]:
        started = time.perf_counter()
        decorated = await seam.decorate(self.hot_path, self.relay, tenant_id=self.tenant_id,
                                        memory_id=self.memory_id, body=self.body, clock=self.clock,
                                        idempotency_key=self._key("decorate", n),
                                        shape="messages" if self.shape == "messages" else None,
                                        user_id=self.user_id)
        if self.decorate_ms is None:
            self.decorate_ms = (time.perf_counter() - started) * 1000
        return decorated

    @property
    def server_timing(self) -> dict[str, str]:
        """The answer's start, broken down: with the gateway's `app;dur=` it shows the proxy's own share."""
        parts = [f"{name};dur={value:.2f}" for name, value in
                 (("decorate", self.decorate_ms), ("upstream", self.upstream_ms)) if value is not None]
        return {"Server-Timing": ", ".join(parts)} if parts else {}

    async def _report(self, n: int, decorate_id: str, reply: dict[str, Any]) -> dict[str, Any]:
        try:
            return await seam.report(self.hot_path, self.relay, tenant_id=self.tenant_id, memory_id=self.memory_id,
                                     decorate_id=decorate_id, response=reply, clock=self.clock,
                                     idempotency_key=self._key("report", n), user_id=self.user_id)
        except InvalidInput as exc:
            # Report refused what the provider returned (nothing stored): the provider's fault, not the agent's.
            raise UpstreamError(f"the upstream's reply is malformed: {exc.message}", status=502, body=orjson.dumps(
                {"error": {"message": f"the upstream's reply is malformed: {exc.message}", "type": "upstream_malformed",
                           "param": exc.field, "code": "upstream_malformed"}})) from exc

    @staticmethod
    def _continues(reported: dict[str, Any], reply: dict[str, Any], n: int) -> bool:
        # Only a reply that held a note call continues: a model that said nothing at all is answered as it is.
        return bool(reported["needs_continuation"]) and bool(note_calls(reply)) and n + 1 < MAX_CALLS

    # --- not streamed ---

    async def answer(self) -> bytes:
        for n in range(MAX_CALLS):
            decorated = await self._decorate(n)
            called = time.perf_counter()
            reply = await self.upstream.create(PATHS[self.shape], decorated["request"], headers=self.headers)
            self.upstream_ms = (time.perf_counter() - called) * 1000
            reported = await self._report(n, decorated["decorate_id"], reply)
            if not self._continues(reported, reply, n):
                break
        response = reported["response"]
        answer = encode(without_note_tool(response) if self.shape == "responses" else response)
        await self._remember(answer)
        return answer

    # --- streamed ---

    async def stream(self) -> AsyncIterator[bytes]:
        """SSE bytes. An error before the first byte is raised (the route answers it with its status); after
        it, the stream ends with an error event the agent's SDK raises, and nothing of the reply is stored."""
        started = False
        try:
            async for chunk in self._events():
                started = True
                yield chunk
        except LetheError as exc:
            if not started:
                raise
            yield self._error_event(exc)

    def _error_event(self, exc: LetheError) -> bytes:
        if isinstance(exc, UpstreamError):
            try:
                error = orjson.loads(exc.body).get("error")
            except (orjson.JSONDecodeError, AttributeError):
                error = None
            error = error if isinstance(error, dict) else {"message": exc.message, "type": exc.type}
        else:
            error = {"message": exc.message, "type": exc.type}
        named = self.shape != "chat_completions"
        return sse({"type": "error", "error": error} if named else {"error": error}, named=named)

    async def _events(self) -> AsyncIterator[bytes]:
        named = self.shape != "chat_completions"
        for n in range(MAX_CALLS):
            decorated = await self._decorate(n)
            request = dict(decorated["request"], stream=True)
            filter_: ChatStreamFilter | ResponsesStreamFilter | MessagesStreamFilter
            if self.shape == "messages":
                filter_ = MessagesStreamFilter()
            elif named:
                filter_ = ResponsesStreamFilter()
            else:
                asked = dict(request.get("stream_options") or {})
                filter_ = ChatStreamFilter(send_usage=bool(asked.get("include_usage")))
                request["stream_options"] = {**asked, "include_usage": True}  # the usage reaches report
            called = time.perf_counter()
            async for event in self.upstream.stream(PATHS[self.shape], request, headers=self.headers):
                for out in filter_.feed(event):
                    if self.upstream_ms is None:
                        self.upstream_ms = (time.perf_counter() - called) * 1000
                    yield self._sent(sse(out, named=named))
            self._check_complete(filter_)
            if isinstance(filter_, ResponsesStreamFilter) and filter_.failed:
                # The provider said the response failed: pass that on as it is; there is no reply to store.
                for out in [*filter_.release(), *filter_.finish()]:
                    yield sse(out, named=named)
                return
            reply = filter_.reply()
            reported = await self._report(n, decorated["decorate_id"], reply)
            if not filter_.visible and self._continues(reported, reply, n):
                continue  # nothing was shown: the agent sees only the next call's answer
            tail = [sse(out, named=named) for out in filter_.release()]
            if isinstance(filter_, ResponsesStreamFilter | MessagesStreamFilter):
                tail += [sse(out, named=named) for out in filter_.finish()]
            else:
                tail.append(_DONE)
            await self._remember(b"".join([*self.sent, *tail]))
            for chunk in tail:
                yield chunk
            return

    def _sent(self, chunk: bytes) -> bytes:
        if self.idempotency_key is not None:
            self.sent.append(chunk)
        return chunk

    @staticmethod
    def _check_complete(filter_: ChatStreamFilter | ResponsesStreamFilter | MessagesStreamFilter) -> None:
        """A stream that ended before the reply did (no finish reason, no terminal event) is a dropped one."""
        if isinstance(filter_, MessagesStreamFilter):
            complete = filter_.complete
        elif isinstance(filter_, ResponsesStreamFilter):
            complete = filter_.terminal is not None
        else:
            complete = bool(filter_.choices) and all(c.finish_reason for c in filter_.choices.values())
        if not complete:
            raise UpstreamError("the upstream's stream ended early", status=502, body=orjson.dumps({"error": {
                "message": "the upstream's stream ended before the reply was complete; retry with the same "
                           "Idempotency-Key", "type": "upstream_disconnected", "code": "upstream_disconnected"}}))
