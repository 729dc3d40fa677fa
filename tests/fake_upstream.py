"""A local OpenAI-compatible (and Anthropic-compatible) provider for the proxy's tests, the examples and
bench/proxy.py.

It speaks Chat Completions, Responses and Anthropic Messages (tests/fake_anthropic.py), streamed (SSE, with
usage) and not, and answers at once from what
the request holds: it writes the note when a request carries the note tool (every other note, the first
included, is the whole reply), calls `lookup` when the user's message says "lookup", and otherwise answers
in text. A test can script the next answers instead: a status (429 with Retry-After, 400, 500), a hang, or
a stream that drops.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from providers.tokens import TiktokenCounter
from tests.support import free_port

__all__ = ["FakeUpstream", "serve_fake_upstream"]

_COUNTER = TiktokenCounter()


@dataclass
class FakeUpstream:
    base_url: str = ""
    # Scripted next answers: "429", "400", "500", "hang", "drop" (stream only: cut after a few events),
    # "malformed" (not streamed: a tool call without its id).
    script: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    notes_written: int = 0
    # Each Messages request's size by the fake's own count, and what it refused in them (Anthropic's rules).
    counts: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    # Which notes are the whole reply: the 1st, 3rd, 5th... (odd) or the 2nd, 4th... (even).
    note_alone_parity: int = 1
    delay: float = 0.0  # seconds before each streamed event, for the benchmark's "slow provider"

    def reset(self) -> None:
        self.script.clear()
        self.requests.clear()
        self.headers.clear()
        self.notes_written = 0
        self.counts.clear()
        self.refused.clear()


# --- what the model says ---

def _tool_names(request: dict[str, Any]) -> set[str]:
    return {str((t.get("function") or t).get("name")) for t in request.get("tools") or []}


def _history(request: dict[str, Any]) -> list[dict[str, Any]]:
    items = request.get("messages") if "messages" in request else request.get("input")
    return [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])


def _text_of(item: dict[str, Any]) -> str:
    content = item.get("content", item.get("output", ""))
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _last_agent_item(request: dict[str, Any]) -> dict[str, Any]:
    """The newest item the agent sent (Lethe's blocks are system or developer messages, skipped)."""
    for item in reversed(_history(request)):
        if item.get("role") not in ("system", "developer"):
            return item
    return {}


def decide(fake: FakeUpstream, request: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    """The reply's text and its calls (id, name, arguments), the note call first when there is one."""
    calls: list[tuple[str, str, str]] = []
    names = _tool_names(request)
    last = _last_agent_item(request)
    said = _text_of(last)
    text = f"Noted: {said[:80]}" if last.get("role") == "user" else f"The record says: {said[:60]}"
    if "note" in names:
        fake.notes_written += 1
        n = fake.notes_written
        notes = [{"note": f"Fact {n}: the user discussed {said[:40]}", "subject": f"topic {n}",
                  "object": said[:30] or "nothing", "milestone": n % 3 == 0}]
        calls.append((f"call_note_{n}", "note", json.dumps({"notes": notes})))
        if n % 2 == fake.note_alone_parity:
            return "", calls  # the note is all the model says this time
    if last.get("role") == "user" and "lookup" in said and "lookup" in names:
        calls.append((f"call_lookup_{len(fake.requests)}", "lookup", json.dumps({"query": said[:20]})))
        text = ""
    return text, calls


def _usage(request: dict[str, Any], text: str, responses: bool) -> dict[str, Any]:
    # Counted as a provider would count them, so the size ratio Lethe learns from report stays near 1.
    prompt = _COUNTER.count_request(request)
    completion = max(1, _COUNTER.count_text(text))
    if responses:
        return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion,
                "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


# --- Chat Completions ---

def chat_reply(request: dict[str, Any], text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", ""), "choices": [{"index": 0, "message": message, "logprobs": None,
                                                            "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": _usage(request, text, False)}


def chat_chunks(request: dict[str, Any], text: str, calls: list[tuple[str, str, str]]) -> Iterator[dict[str, Any]]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": request.get("model", "")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for word in _pieces(text):
        yield chunk({"content": word})
    for index, (call_id, name, arguments) in enumerate(calls):
        yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                     "function": {"name": name, "arguments": ""}}]})
        half = len(arguments) // 2
        for part in (arguments[:half], arguments[half:]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    yield chunk({}, "tool_calls" if calls else "stop")
    if (request.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(request, text, False)}


def _pieces(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)] if text else []


# --- Responses ---

def _output(text: str, calls: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"id": f"fc_{i}", "type": "function_call", "status": "completed", "call_id": i, "name": n, "arguments": a}
        for i, n, a in calls if n == "note"]
    if text:
        items.append({"id": "msg_fake", "type": "message", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": text, "annotations": []}]})
    items += [{"id": f"fc_{i}", "type": "function_call", "status": "completed", "call_id": i, "name": n,
               "arguments": a} for i, n, a in calls if n != "note"]
    return items


def responses_reply(request: dict[str, Any], text: str, calls: list[tuple[str, str, str]], *,
                    usage: bool = True) -> dict[str, Any]:
    return {"id": "resp_fake", "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": request.get("model", ""), "output": _output(text, calls), "tools": request.get("tools", []),
            "parallel_tool_calls": True, "tool_choice": "auto",
            "usage": _usage(request, text, True) if usage else None}


def responses_events(request: dict[str, Any], text: str,
                     calls: list[tuple[str, str, str]]) -> Iterator[dict[str, Any]]:
    whole = responses_reply(request, text, calls, usage=False)
    started = {**whole, "status": "in_progress", "output": []}
    yield {"type": "response.created", "response": started}
    yield {"type": "response.in_progress", "response": started}
    for index, item in enumerate(whole["output"]):
        if item["type"] == "message":
            yield {"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "status": "in_progress", "content": []}}
            part = {"type": "output_text", "text": "", "annotations": []}
            yield {"type": "response.content_part.added", "item_id": item["id"], "output_index": index,
                   "content_index": 0, "part": part}
            for word in _pieces(text):
                yield {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                       "content_index": 0, "delta": word, "logprobs": []}
            yield {"type": "response.output_text.done", "item_id": item["id"], "output_index": index,
                   "content_index": 0, "text": text, "logprobs": []}
            yield {"type": "response.content_part.done", "item_id": item["id"], "output_index": index,
                   "content_index": 0, "part": {**part, "text": text}}
        else:
            yield {"type": "response.output_item.added", "output_index": index,
                   "item": {**item, "status": "in_progress", "arguments": ""}}
            yield {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": index,
                   "delta": item["arguments"]}
            yield {"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": index,
                   "arguments": item["arguments"]}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    yield {"type": "response.completed", "response": {**whole, "usage": _usage(request, text, True)}}


# --- the server ---

def _app(fake: FakeUpstream) -> FastAPI:
    app = FastAPI()

    async def handle(request: Request, responses: bool) -> Response:
        body = await request.json()
        fake.requests.append(body)
        fake.headers.append(dict(request.headers))
        step = fake.script.pop(0) if fake.script else "ok"
        if step == "429":
            return JSONResponse({"error": {"message": "Rate limit reached for requests", "type": "requests",
                                           "param": None, "code": "rate_limit_exceeded"}},
                                status_code=429, headers={"retry-after": "7"})
        if step == "400":
            return JSONResponse({"error": {"message": "Invalid value for 'temperature': must be at most 2.",
                                           "type": "invalid_request_error", "param": "temperature",
                                           "code": "invalid_value"}}, status_code=400)
        if step == "500":
            return JSONResponse({"error": {"message": "The server had an error while processing your request.",
                                           "type": "server_error", "param": None, "code": None}}, status_code=500)
        if step == "hang":
            await asyncio.sleep(5)  # past the test gateway's upstream timeout
        if step == "malformed":
            reply = chat_reply(body, "", [("call_1", "lookup", "{}")])
            del reply["choices"][0]["message"]["tool_calls"][0]["id"]
            return JSONResponse(reply)
        text, calls = decide(fake, body)
        if not body.get("stream"):
            return JSONResponse(responses_reply(body, text, calls) if responses else chat_reply(body, text, calls))
        # Made as they are sent, as a provider does: the usage (a count of the whole request) comes last, not
        # before the first token.
        events = responses_events(body, text, calls) if responses else chat_chunks(body, text, calls)
        return StreamingResponse(_sse(fake, events, responses, drop=step == "drop"), media_type="text/event-stream")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        return await handle(request, responses=False)

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        return await handle(request, responses=True)

    from tests.fake_anthropic import messages_route

    messages_route(app, fake)
    return app


async def _sse(fake: FakeUpstream, events: Iterator[dict[str, Any]], responses: bool, *,
               drop: bool) -> AsyncIterator[bytes]:
    for number, event in enumerate(events):
        if drop and number == 3:
            raise ConnectionResetError("scripted drop")  # uvicorn cuts the connection mid-body
        if fake.delay:
            await asyncio.sleep(fake.delay)
        if responses:
            event = {**event, "sequence_number": number}
            yield f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
        else:
            yield f"data: {json.dumps(event)}\n\n".encode()
    if not responses:
        yield b"data: [DONE]\n\n"


@contextmanager
def serve_fake_upstream() -> Iterator[FakeUpstream]:
    """The fake on a free port, in a thread with its own event loop, for as long as the block lasts."""
    fake = FakeUpstream()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_app(fake), host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake upstream did not start")
        time.sleep(0.02)
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=5)
