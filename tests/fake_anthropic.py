"""The fake upstream's Anthropic Messages endpoint (`POST /v1/messages`), in Anthropic's wire format.

It records what Anthropic's API would refuse and Lethe must get right (a key, in `x-api-key` or as a bearer token;
`anthropic-version`; user and assistant roles only; each `tool_use` answered in the very next message, each
`tool_result` answering the message before), counts each request itself, and answers as the OpenAI endpoints
do: the note when the note tool is offered, `lookup` when asked, text otherwise; a thinking block first when
the request enables thinking. Usage splits its count between `input_tokens` and `cache_read_input_tokens`,
as a cache hit does, so the gateway must add them up.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tests.fake_upstream import _COUNTER, FakeUpstream, _pieces, decide

__all__ = ["messages_route"]


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def refusals(body: dict[str, Any], headers: dict[str, str]) -> list[str]:
    """What Anthropic's API would refuse in this request (as far as the tests need)."""
    found = []
    if not headers.get("x-api-key") and not headers.get("authorization", "").startswith("Bearer "):
        found.append("no key: x-api-key or Authorization: Bearer")
    if not headers.get("anthropic-version"):
        found.append("anthropic-version header missing")
    messages = body.get("messages") or []
    if not messages:
        found.append("messages: empty")
    system = body.get("system")
    if system is not None and not (isinstance(system, str) or all(
            isinstance(b, dict) and b.get("type") == "text" and b.get("text") for b in system)):
        found.append("system: must be a string or non-empty text blocks")
    called: set[Any] = set()
    for index, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            found.append(f"messages.{index}.role: {message.get('role')!r}")
        results = {b.get("tool_use_id") for b in _blocks(message, "tool_result")}
        if called != results:
            found.append(f"messages.{index}: tool_use {sorted(map(str, called))} answered by "
                         f"{sorted(map(str, results))}")
        called = {b.get("id") for b in _blocks(message, "tool_use")} if message.get("role") == "assistant" else set()
        if message.get("content") in ("", []) and index < len(messages) - 1:
            found.append(f"messages.{index}: empty content")
    if called:
        found.append(f"tool_use {sorted(map(str, called))} have no tool_result")
    names = [t.get("name") for t in body.get("tools") or []]
    if len(names) != len(set(names)):
        found.append("tools: names must be unique")
    return found


def _chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """The request as `decide` reads it: the tools, and the newest message in Chat's words."""
    last = (body.get("messages") or [{}])[-1]
    results = _blocks(last, "tool_result")
    if results:
        said = " ".join(str(r.get("content")) if not isinstance(r.get("content"), list) else
                        " ".join(str(p.get("text", "")) for p in r["content"]) for r in results)
        item = {"role": "tool", "content": said}
    else:
        content = last.get("content")
        text = content if isinstance(content, str) else " ".join(
            str(b.get("text", "")) for b in content or [] if isinstance(b, dict))
        item = {"role": last.get("role"), "content": text}
    return {"tools": [{"name": t.get("name")} for t in body.get("tools") or []], "messages": [item]}


def _usage(prompt: int, text: str) -> dict[str, Any]:
    cached = prompt // 3
    return {"input_tokens": prompt - cached, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
            "output_tokens": max(1, _COUNTER.count_text(text))}


def _content(body: dict[str, Any], text: str, calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if (body.get("thinking") or {}).get("type") == "enabled":
        blocks.append({"type": "thinking", "thinking": "Weighing the request.", "signature": "sig-fake-0123"})
    if text:
        blocks.append({"type": "text", "text": text})
    blocks += [{"type": "tool_use", "id": i.replace("call_", "toolu_"), "name": n, "input": json.loads(a)}
               for i, n, a in calls]
    return blocks


def message_reply(body: dict[str, Any], prompt: int, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", ""),
            "content": _content(body, text, calls), "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None, "usage": _usage(prompt, text)}


def message_events(body: dict[str, Any], prompt: int, text: str,
                   calls: list[tuple[str, str, str]]) -> Iterator[dict[str, Any]]:
    whole = message_reply(body, prompt, text, calls)
    usage = whole["usage"]
    yield {"type": "message_start", "message": {**whole, "content": [], "stop_reason": None,
                                                "usage": {**usage, "output_tokens": 1}}}
    yield {"type": "ping"}
    for index, block in enumerate(whole["content"]):
        kind = block["type"]
        if kind == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for word in _pieces(block["text"]):
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": word}}
        elif kind == "thinking":
            yield {"type": "content_block_start", "index": index,
                   "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}
            yield {"type": "content_block_delta", "index": index,
                   "delta": {"type": "signature_delta", "signature": block["signature"]}}
        else:
            yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
            arguments = json.dumps(block["input"])
            half = len(arguments) // 2
            for part in (arguments[:half], arguments[half:]):
                yield {"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": part}}
        yield {"type": "content_block_stop", "index": index}
    yield {"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
           "usage": {"output_tokens": usage["output_tokens"]}}
    yield {"type": "message_stop"}


async def _sse(fake: FakeUpstream, events: Iterator[dict[str, Any]], *, drop: bool) -> AsyncIterator[bytes]:
    for number, event in enumerate(events):
        if drop and number == 3:
            raise ConnectionResetError("scripted drop")
        if fake.delay:
            await asyncio.sleep(fake.delay)
        yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _error(status: int, kind: str, message: str, **headers: str) -> JSONResponse:
    # Anthropic's error shape: {"type": "error", "error": {"type", "message"}}.
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status,
                        headers=headers)


def messages_route(app: FastAPI, fake: FakeUpstream) -> None:
    @app.post("/v1/messages")
    async def messages(request: Request) -> Response:
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        fake.requests.append(body)
        fake.headers.append(headers)
        prompt = _COUNTER.count_request(body)
        fake.counts.append(prompt)
        step = fake.script.pop(0) if fake.script else "ok"
        if step == "429":
            return _error(429, "rate_limit_error", "Number of requests has exceeded your rate limit",
                          **{"retry-after": "7"})
        if step == "500":
            return _error(500, "api_error", "Internal server error")
        if step == "hang":
            await asyncio.sleep(5)
        # Recorded, not refused: a test asserts there were none, and the proxy's fuzzing sends what no model
        # would take, whose answer is beside its point.
        fake.refused += refusals(body, headers)
        text, calls = decide(fake, _chat_view(body))
        if not body.get("stream"):
            return JSONResponse(message_reply(body, prompt, text, calls))
        return StreamingResponse(_sse(fake, message_events(body, prompt, text, calls), drop=step == "drop"),
                                 media_type="text/event-stream")
