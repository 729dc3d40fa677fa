"""The `openai` SDK pointed at the gateway: both shapes, streamed and not, with tool calls, the same content."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import httpx
import pytest
from openai import AsyncOpenAI

from tests.fake_upstream import FakeUpstream
from tests.integration.proxy.agents import ChatAgent, ResponsesAgent

QUESTIONS = ["Hello, I am Ada and I look after the billing service.", "Please lookup ticket LTH-42 for me.",
             "Thanks, that is all for today."]


async def _export(http: httpx.AsyncClient, key: str, memory_id: str) -> dict:
    response = await http.get(f"/v1/memories/{memory_id}/export", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.text
    return json.loads(response.text)


@pytest.mark.parametrize("shape", ["chat_completions", "responses"])
async def test_streamed_and_plain_answers_carry_the_same_content_and_tool_calls(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], shape: str,
) -> None:
    agents = {}
    for stream in (False, True):
        client = agent_client(f"sdk-{shape}-{stream}")
        agent = ChatAgent(client) if shape == "chat_completions" else ResponsesAgent(client)
        for question in QUESTIONS:
            await agent.ask(question, stream=stream)
        agents[stream] = agent
    plain, streamed = agents[False].replies, agents[True].replies
    assert [(r.text, [(n, a) for _, n, a in r.calls]) for r in plain] == \
           [(r.text, [(n, a) for _, n, a in r.calls]) for r in streamed]
    assert any(r.calls for r in plain), "the lookup turn made no tool call"
    assert plain[0].text.startswith("Noted: Hello, I am Ada")
    # The provider's usage reaches the agent when it asks for it, streamed or not.
    assert plain[0].usage and plain[0].usage["total_tokens"] > 0

    for stream, agent in agents.items():
        export = await _export(http, tenant[1], f"sdk-{shape}-{stream}")
        stored = json.dumps(export["messages"])
        users = [m["body"]["content"] for m in export["messages"] if m["role"] == "user"]
        assert users == QUESTIONS  # every turn once, none twice
        assert all(r.text in stored for r in agent.replies if r.text)


async def test_path_prefix_names_the_memory_for_clients_without_headers(
    proxy_gateway: str, upstream: FakeUpstream, http: httpx.AsyncClient, tenant: tuple[str, str],
) -> None:
    # The tenant's stored upstream, set through the admin API, so the client sets nothing but base_url.
    from tests.integration.conftest import ADMIN_TOKEN

    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with httpx.AsyncClient(base_url=proxy_gateway) as gateway:
        put = await gateway.put(f"/v1/admin/tenants/{tenant[0]}/upstream", headers=admin,
                                json={"base_url": upstream.base_url, "api_key": "sk-stored-key-abcdefgh1234"})
        shown = await gateway.get(f"/v1/admin/tenants/{tenant[0]}/upstream", headers=admin)
    assert put.status_code == 200, put.text
    assert put.json()["api_key_hint"] == "…1234" and "sk-stored" not in put.text
    assert shown.json() == put.json()
    client = AsyncOpenAI(base_url=f"{proxy_gateway}/v1/m/path-memory", api_key=tenant[1], max_retries=0)
    agent = ChatAgent(client)
    reply = await agent.ask("Hello through the path", stream=False)
    assert reply.text == "Noted: Hello through the path"
    assert upstream.headers[-1]["authorization"] == "Bearer sk-stored-key-abcdefgh1234"
    export = await _export(http, tenant[1], "path-memory")
    assert "Hello through the path" in json.dumps(export["messages"])


async def test_missing_memory_and_upstream_are_named_errors(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str],
) -> None:
    async with httpx.AsyncClient(base_url=proxy_gateway) as raw:
        auth = {"Authorization": f"Bearer {tenant[1]}"}
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        no_memory = await raw.post("/v1/chat/completions", json=body, headers=auth)
        assert no_memory.status_code == 422 and no_memory.json()["error"]["field"] == "X-Lethe-Memory"
        no_upstream = await raw.post("/v1/chat/completions", json=body, headers={**auth, "X-Lethe-Memory": "m1"})
        assert no_upstream.status_code == 422 and no_upstream.json()["error"]["field"] == "X-Lethe-Upstream-Key"
        wrong_shape = await raw.post("/v1/responses", json=body, headers={**auth, "X-Lethe-Memory": "m1"})
        assert wrong_shape.status_code == 422 and wrong_shape.json()["error"]["field"] == "input"


async def test_upstream_key_never_reaches_the_logs(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    agent = ChatAgent(agent_client("log-check"))
    await agent.ask("Hello", stream=True)
    upstream.script.append("429")
    with pytest.raises(Exception):  # noqa: B017 - the 429 itself is tested elsewhere
        await agent.ask("Again", stream=False)
    assert upstream.headers[0]["authorization"] == "Bearer sk-upstream-secret-0123456789"
    assert upstream.headers[0]["content-type"] == "application/json"
    assert "sk-upstream-secret" not in caplog.text
