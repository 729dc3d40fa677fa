"""`lethe.client` (sync and async), `wrap()`, and the examples, against the gateway and the local upstream."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from openai import AsyncOpenAI, OpenAI

from examples import agent_loop, proxy_agent, tool_agent
from lethe.client import AsyncLethe, Lethe, LetheAPIError, wrap
from tests.fake_upstream import FakeUpstream

CHAT = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hello from the client"}]}


async def test_async_client_decorates_reports_and_reads_back(proxy_gateway: str, tenant: tuple[str, str]) -> None:
    async with AsyncLethe(proxy_gateway, tenant[1]) as lethe:
        decorated = await lethe.decorate("client-async", CHAT, idempotency_key="turn-1")
        again = await lethe.decorate("client-async", CHAT, idempotency_key="turn-1")
        assert again.decorate_id == decorated.decorate_id  # a retry: the first answer, nothing stored twice
        reply = {"id": "c1", "object": "chat.completion", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello back"}, "finish_reason": "stop"}]}
        reported = await lethe.report("client-async", decorated.decorate_id, reply)
        assert reported.response["choices"][0]["message"]["content"] == "Hello back"
        assert not reported.needs_continuation
        state = await lethe.state("client-async")
        assert (state.messages, state.turns) == (2, 1)
        export = await lethe.export("client-async")
        assert [m["role"] for m in export["messages"]] == ["user", "assistant"]
        with pytest.raises(LetheAPIError) as caught:
            await lethe.decorate("client-async", {"model": "m", "messages": []})
        assert caught.value.status == 422 and caught.value.field == "messages"
        erased = await lethe.erase("client-async")
        assert erased.erased
        with pytest.raises(LetheAPIError) as gone:
            await lethe.state("client-async")
        assert gone.value.status == 404


async def test_sync_client_and_wrap_keep_the_note_from_the_caller(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str],
) -> None:
    def converse() -> tuple[list[str], dict]:
        with Lethe(proxy_gateway, tenant[1]) as lethe:
            client = wrap(OpenAI(base_url=upstream.base_url, api_key="sk-fake"), memory_id="wrapped", lethe=lethe)
            answers = []
            messages: list[dict] = []
            for text in ("First question", "Second question"):
                messages.append({"role": "user", "content": text})
                completion = client.chat.completions.create(model="gpt-test", messages=messages)
                answers.append(completion.choices[0].message.content)
                messages.append({"role": "assistant", "content": completion.choices[0].message.content})
            return answers, lethe.export("wrapped")

    answers, export = await asyncio.to_thread(converse)
    assert answers == ["Noted: First question", "Noted: Second question"]
    assert [m["body"]["content"] for m in export["messages"] if m["role"] == "user"] == \
        ["First question", "Second question"]


async def test_wrap_of_an_async_client_on_the_responses_api(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str],
) -> None:
    async with AsyncLethe(proxy_gateway, tenant[1]) as lethe:
        client = wrap(AsyncOpenAI(base_url=upstream.base_url, api_key="sk-fake"), memory_id="wrapped-r", lethe=lethe)
        response = await client.responses.create(model="gpt-test", input="Hello in Responses")
        assert response.output_text == "Noted: Hello in Responses"
        with pytest.raises(ValueError, match="proxy"):
            await client.responses.create(model="gpt-test", input="x", stream=True)


async def test_examples_run_against_the_local_upstream(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], http: httpx.AsyncClient,
) -> None:
    args = (proxy_gateway, tenant[1], upstream.base_url, "sk-fake")
    direct = await asyncio.to_thread(agent_loop.run, *args, memory_id="ex-loop")
    proxied = await asyncio.to_thread(proxy_agent.run, *args, memory_id="ex-proxy")
    assert direct == proxied == [f"Noted: {q[:80]}" for q in agent_loop.QUESTIONS]
    answer, tools = await asyncio.to_thread(tool_agent.run, *args, memory_id="ex-tools")
    assert tools == ["lookup"] and "owner Dana" in answer
    async with httpx.AsyncClient(base_url=proxy_gateway) as gateway:
        export = json.loads((await gateway.get("/v1/memories/ex-tools/export",
                                               headers={"Authorization": f"Bearer {tenant[1]}"})).text)
    assert [m["role"] for m in export["messages"]] == ["user", "function_call", "function_call_output", "assistant"]
