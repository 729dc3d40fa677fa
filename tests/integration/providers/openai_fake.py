"""A local server speaking the OpenAI API over real HTTP, scripted per test (errors, delays, junk answers)."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

__all__ = ["FakeOpenAI", "Step", "free_port", "serve_fake_openai"]


@dataclass
class Step:
    """One scripted answer: an HTTP status, a delay before answering, or the chat content to return."""

    status: int = 200
    delay: float = 0.0
    content: str | None = None
    finish_reason: str = "stop"


@dataclass
class FakeOpenAI:
    base_url: str = ""
    script: list[Step] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Answers chat calls from their request when no scripted step says otherwise: a stand-in model.
    answer: Callable[[dict[str, Any]], str] | None = None

    def plan(self, *steps: Step) -> None:
        self.script[:] = list(steps)
        self.requests.clear()


def _vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    # Deliberately not unit length: the client must normalise what a server sends.
    return [((digest[i % 32] + i) % 17 - 8) / 3.0 for i in range(384)]


def _app(fake: FakeOpenAI) -> FastAPI:
    app = FastAPI()

    async def next_step(request: Request) -> tuple[Step, dict[str, Any]]:
        body = await request.json()
        fake.requests.append(body)
        step = fake.script.pop(0) if fake.script else Step()
        if step.delay:
            await asyncio.sleep(step.delay)
        return step, body

    def error(step: Step) -> JSONResponse:
        # retry-after-ms keeps the SDK's backoff short in tests; its exponential default is half a second up.
        return JSONResponse(
            {"error": {"message": "scripted", "type": "server_error"}},
            status_code=step.status,
            headers={"retry-after-ms": "20"},
        )

    @app.post("/v1/embeddings")
    async def embeddings(request: Request) -> JSONResponse:
        step, body = await next_step(request)
        if step.status != 200:
            return error(step)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": _vector(t)} for i, t in enumerate(texts)]
        tokens = sum(len(t.split()) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        step, body = await next_step(request)
        if step.status != 200:
            return error(step)
        content = step.content if step.content is not None else fake.answer(body) if fake.answer else "{}"
        message = {"role": "assistant", "content": content}
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
            }
        )

    return app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_fake_openai() -> Iterator[FakeOpenAI]:
    """Run the fake on a free port in a thread, uvicorn and all, for as long as the block lasts."""
    fake = FakeOpenAI()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(_app(fake), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake OpenAI server did not start")
        time.sleep(0.02)
    fake.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield fake
    finally:
        server.should_exit = True
        thread.join(timeout=5)
