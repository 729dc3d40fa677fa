"""The proxy: point an OpenAI client's `base_url` (or an Anthropic client's, for `/v1/messages`) at Lethe and
keep the rest of the agent.

The memory comes from the `X-Lethe-Memory` header, or from the path for clients that cannot set headers
(`base_url=.../v1/m/{memory_id}`); the tenant from the API key, as everywhere.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import Response, StreamingResponse

from api.deps import AnthropicTenantDep, ClockDep, HotPathDep, MemoryIdDep, OptionsDep, RelayDep, TenantDep, UserHeader
from api.encoding import JSONBytes
from api.openapi import BODY, PROXIED, TENANT, UPSTREAM_ERRORS, errors, json_body
from api.schemas import MEMORY_ID_PATTERN
from contracts.errors import InvalidInput, PayloadTooLarge
from service.clock import Clock
from service.context import HotPath
from service.options import GatewayOptions
from service.proxy.turns import ProxyCall
from service.proxy.upstreams import ANTHROPIC_BASE_URL, DEFAULT_BASE_URL, ProxyContext
from service.relay import OutboxRelay

router = APIRouter(tags=["proxy"])
_RESPONSES = {200: PROXIED, **errors(*TENANT, *BODY, 409), **UPSTREAM_ERRORS}
_CHAT, _RESPONSES_BODY = json_body("ChatCompletionsRequest"), json_body("ResponsesRequest")
_MESSAGES = json_body("MessagesRequestBody")

# With the patterns the routes check, and typed `str` (the upstream URL absent is None): the document then offers
# neither a `null` a client could send as the text "null" nor a value the route refuses. The memory header is
# required where the path does not name the memory.
MemoryHeader = Annotated[str, Header(alias="X-Lethe-Memory", json_schema_extra={"pattern": MEMORY_ID_PATTERN.pattern})]
UpstreamURL = Annotated[str, Header(alias="X-Lethe-Upstream-Base-URL", json_schema_extra={"pattern": r"^https?://"})]
UpstreamKey = Annotated[str | None, Header(alias="X-Lethe-Upstream-Key")]
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=200)]
_FIELD = {"chat_completions": "messages", "responses": "input", "messages": "messages"}


async def _body(request: Request, limit: int, shape: str) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > limit:
        raise PayloadTooLarge(f"the body is {len(raw)} bytes; the limit is {limit} (LETHE_MAX_BODY_BYTES)")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # orjson refuses integers past 64 bits, which a request may carry
            body = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"the body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object")
    if _FIELD[shape] not in body:
        raise InvalidInput(f"this endpoint takes `{_FIELD[shape]}`", field=_FIELD[shape])
    return body


@dataclass(frozen=True)
class _Caller:
    """What every proxy route takes besides the memory: who calls, through what, with which upstream."""

    tenant_id: str
    hot_path: HotPath
    relay: OutboxRelay
    clock: Clock
    options: GatewayOptions
    upstream_url: str | None
    upstream_key: str | None
    idempotency_key: str | None
    user_id: str | None


async def _caller(
    tenant_id: TenantDep, hot_path: HotPathDep, relay: RelayDep, clock: ClockDep, options: OptionsDep,
    upstream_url: UpstreamURL = None,  # type: ignore[assignment]
    upstream_key: UpstreamKey = None, idempotency_key: IdempotencyKey = None, user: UserHeader = None,
) -> _Caller:
    return _Caller(tenant_id, hot_path, relay, clock, options, upstream_url, upstream_key, idempotency_key, user)


CallerDep = Annotated[_Caller, Depends(_caller)]


async def _anthropic_caller(
    tenant_id: AnthropicTenantDep, hot_path: HotPathDep, relay: RelayDep, clock: ClockDep, options: OptionsDep,
    upstream_url: UpstreamURL = None,  # type: ignore[assignment]
    upstream_key: UpstreamKey = None, idempotency_key: IdempotencyKey = None, user: UserHeader = None,
) -> _Caller:
    return _Caller(tenant_id, hot_path, relay, clock, options, upstream_url, upstream_key, idempotency_key, user)


AnthropicCallerDep = Annotated[_Caller, Depends(_anthropic_caller)]


async def _proxy(shape: str, request: Request, memory_id: str, caller: _Caller) -> Response:
    if not MEMORY_ID_PATTERN.match(memory_id):
        raise InvalidInput("memory ids are 1-128 of A-Z a-z 0-9 . _ : -", field="X-Lethe-Memory")
    body = await _body(request, caller.options.limits.max_body_bytes, shape)
    proxy: ProxyContext = request.app.state.services.proxy
    anthropic = shape == "messages"
    target = await proxy.target(caller.tenant_id, base_url=caller.upstream_url, api_key=caller.upstream_key,
                                default_base_url=ANTHROPIC_BASE_URL if anthropic else DEFAULT_BASE_URL)
    call = ProxyCall(hot_path=caller.hot_path, relay=caller.relay, upstream=await proxy.pool.get(target),
                     tenant_id=caller.tenant_id, memory_id=memory_id, clock=caller.clock, shape=shape, body=body,
                     idempotency_key=caller.idempotency_key, user_id=caller.user_id,
                     anthropic_version=request.headers.get("anthropic-version") if anthropic else None,
                     anthropic_beta=request.headers.get("anthropic-beta") if anthropic else None)
    streamed = bool(body.get("stream"))
    if (replay := await call.replay()) is not None:
        return Response(replay, media_type="text/event-stream") if streamed else JSONBytes(replay)
    if not streamed:
        answer = await call.answer()
        return JSONBytes(answer, headers=call.server_timing)
    events = call.stream()
    # The first bytes are awaited here, so what fails before anything was shown (decorate, a 429) is an
    # ordinary HTTP error with its status; what fails after is an error event at the end of the stream.
    first = await anext(events, b"")

    async def rest() -> AsyncIterator[bytes]:
        yield first
        async for chunk in events:
            yield chunk

    return StreamingResponse(rest(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", **call.server_timing})


@router.post("/v1/chat/completions", responses=_RESPONSES, openapi_extra=_CHAT)
async def chat_completions(request: Request, memory: MemoryHeader, caller: CallerDep) -> Response:
    return await _proxy("chat_completions", request, memory, caller)


@router.post("/v1/responses", responses=_RESPONSES, openapi_extra=_RESPONSES_BODY)
async def responses(request: Request, memory: MemoryHeader, caller: CallerDep) -> Response:
    return await _proxy("responses", request, memory, caller)


@router.post("/v1/m/{memory_id}/chat/completions", responses=_RESPONSES, openapi_extra=_CHAT)
async def chat_completions_in_path(request: Request, memory_id: MemoryIdDep, caller: CallerDep) -> Response:
    return await _proxy("chat_completions", request, memory_id, caller)


@router.post("/v1/m/{memory_id}/responses", responses=_RESPONSES, openapi_extra=_RESPONSES_BODY)
async def responses_in_path(request: Request, memory_id: MemoryIdDep, caller: CallerDep) -> Response:
    return await _proxy("responses", request, memory_id, caller)


@router.post("/v1/messages", responses=_RESPONSES, openapi_extra=_MESSAGES)
async def messages(request: Request, memory: MemoryHeader, caller: AnthropicCallerDep) -> Response:
    return await _proxy("messages", request, memory, caller)


@router.post("/v1/m/{memory_id}/messages", responses=_RESPONSES, openapi_extra=_MESSAGES)
async def messages_in_path(request: Request, memory_id: MemoryIdDep, caller: AnthropicCallerDep) -> Response:
    return await _proxy("messages", request, memory_id, caller)
