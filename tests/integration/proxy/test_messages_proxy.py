"""The Anthropic Messages proxy (`POST /v1/messages`) driven by the `anthropic` SDK against the fake upstream's
Anthropic endpoint: the same content as the upstream gives directly, streamed and not, with tool use and
thinking; a 100-turn agent that never heard of the note tool held to the ceiling by the fake's own count;
upstream errors passed through."""

from __future__ import annotations

import json
from collections.abc import Callable

import anthropic
import httpx
import pytest
from anthropic import AsyncAnthropic

from tests.fake_upstream import FakeUpstream
from tests.integration.proxy.anthropic_agent import MESSAGES_TOOLS, SYSTEM, MessagesAgent
from tests.integration.proxy.conftest import PROXY_CEILING
from tests.integration.proxy.test_proxy_agent import _question

UPSTREAM_KEY = "sk-ant-upstream-secret-0123456789"


@pytest.fixture
def messages_client(proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str]
                    ) -> Callable[..., AsyncAnthropic]:
    """An Anthropic client pointed at the gateway (its key is the tenant's), the upstream named in headers."""

    def make(memory_id: str) -> AsyncAnthropic:
        return AsyncAnthropic(base_url=proxy_gateway, api_key=tenant[1], max_retries=0, default_headers={
            "X-Lethe-Memory": memory_id, "X-Lethe-Upstream-Base-URL": upstream.base_url,
            "X-Lethe-Upstream-Key": UPSTREAM_KEY})

    return make


def _direct(upstream: FakeUpstream) -> AsyncAnthropic:
    return AsyncAnthropic(base_url=upstream.base_url.removesuffix("/v1"), api_key=UPSTREAM_KEY, max_retries=0)


def _same(content: list[dict]) -> list[dict]:
    # Call ids are the fake's request count: everything else must match.
    return [{k: v for k, v in block.items() if k != "id"} for block in content]


@pytest.mark.parametrize("stream", [False, True])
async def test_messages_answer_as_the_upstream_does_directly(
    messages_client: Callable[..., AsyncAnthropic], upstream: FakeUpstream, stream: bool,
) -> None:
    question = "Please lookup ticket LTH-7 and say who owns it."
    through = MessagesAgent(messages_client(f"same-{stream}"))
    direct = MessagesAgent(_direct(upstream))
    for agent in (through, direct):
        await agent.ask(question, stream=stream, thinking={"type": "enabled", "budget_tokens": 1024})
    assert upstream.refused == []
    # A tool loop: thinking + lookup call, then thinking + text after the tool result.
    assert [_same(c) for c in through.contents] == [_same(c) for c in direct.contents]
    assert [b["type"] for b in through.contents[0]] == ["thinking", "tool_use"]
    assert through.replies[-1].text.startswith("The record says: ticket")
    # The key went upstream as x-api-key, never the tenant's, with the agent's anthropic-version.
    sent, straight = upstream.headers[0], upstream.headers[-1]
    assert sent["x-api-key"] == UPSTREAM_KEY and "authorization" not in sent
    assert sent["anthropic-version"] == straight["anthropic-version"]
    # Usage is the upstream's, cache reads included.
    assert through.replies[0].usage == direct.replies[0].usage
    # The thinking block went back upstream untouched, signature and all, and the agent's system first.
    proxied = upstream.requests[1]
    assert proxied["messages"][1]["content"][0] == through.contents[0][0]
    assert proxied["system"][0] == SYSTEM[0]


async def test_messages_upstream_errors_pass_through(
    messages_client: Callable[..., AsyncAnthropic], upstream: FakeUpstream,
) -> None:
    client = messages_client("errors")
    upstream.script.append("429")
    with pytest.raises(anthropic.RateLimitError) as caught:
        await client.messages.create(model="claude-test", max_tokens=64,
                                     messages=[{"role": "user", "content": "Hello"}])
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body["error"]["type"] == "rate_limit_error"  # type: ignore[index]
    upstream.script.append("500")
    with pytest.raises(anthropic.InternalServerError):
        async with client.messages.stream(model="claude-test", max_tokens=64,
                                          messages=[{"role": "user", "content": "Hello"}]) as stream:
            await stream.get_final_message()
    # A stream that drops after it started ends with an error event the SDK raises; nothing half is stored.
    upstream.script.append("drop")
    with pytest.raises(anthropic.APIError):
        async with client.messages.stream(model="claude-test", max_tokens=64,
                                          messages=[{"role": "user", "content": "Hello there"}]) as stream:
            await stream.get_final_message()


async def test_hundred_turns_of_a_messages_agent_unaware_of_notes_stay_within_the_ceiling(
    messages_client: Callable[..., AsyncAnthropic], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str],
) -> None:
    memory_id = "hundred-messages"
    agent = MessagesAgent(messages_client(memory_id))
    questions = [_question(turn, paragraphs=1) for turn in range(1, 101)]
    for turn, question in enumerate(questions, start=1):
        await agent.ask(question, stream=turn % 2 == 1)
    assert upstream.refused == [], upstream.refused[:5]
    # The agent never sees a note call, nor an empty answer a note call left behind.
    assert all(name != "note" for reply in agent.replies for _, name, _ in reply.calls)
    assert all(reply.text or reply.calls for reply in agent.replies)
    assert any(reply.calls for reply in agent.replies)
    # Its notes were asked for with the one note tool, as an Anthropic tool, and every one was taken.
    asked = [r for r in upstream.requests if any(t["name"] == "note" for t in r.get("tools") or [])]
    assert asked and all(set(t) == {"name", "description", "input_schema"} for r in asked for t in r["tools"]
                         if t["name"] == "note")
    auth = {"Authorization": f"Bearer {tenant[1]}"}
    export = json.loads((await http.get(f"/v1/memories/{memory_id}/export", headers=auth)).text)
    assert upstream.notes_written >= 1
    assert [c["taken"] for c in export["note_calls"]] == [True] * upstream.notes_written
    assert {e["state"] for e in export["episodes"]} & {"sealed", "forgotten"}
    # A note that was the whole reply was answered by a call the agent never saw.
    assert len(upstream.requests) > len(agent.replies)
    # Every request within the ceiling by the fake's own count; Lethe's blocks after the agent's cached system.
    assert len(upstream.counts) == len(upstream.requests) == len(export["decorations"])
    assert max(upstream.counts) <= PROXY_CEILING, sorted(upstream.counts)[-5:]
    assert all(r["system"][0] == SYSTEM[0] for r in upstream.requests)
    assert any(len(r["system"]) > 1 for r in upstream.requests)  # the facts block, a recall block, the ask
    assert all(r["tools"][0] == MESSAGES_TOOLS[0] for r in upstream.requests)
    # The memory holds every turn once (the agent's resends were recognised), and every answer it saw.
    users = [m["body"]["content"] for m in export["messages"]
             if m["body"].get("role") == "user" and isinstance(m["body"]["content"], str)]
    assert users == questions
    assistants = [m for m in export["messages"] if m["body"].get("role") == "assistant"]
    assert len(assistants) == len(upstream.requests)  # each reply once, though the agent sends it back each turn
    stored = json.dumps(export["messages"])
    assert all(json.dumps(reply.text)[1:-1] in stored for reply in agent.replies if reply.text)
    assert (await http.delete(f"/v1/memories/{memory_id}", headers=auth)).json()["erased"]


async def test_messages_take_the_tenant_key_as_x_api_key_and_the_memory_in_the_path(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str],
) -> None:
    # Clients that send Anthropic's `x-api-key` and cannot set headers per memory (base_url=.../v1/m/{id}).
    headers = {"x-api-key": tenant[1], "anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024-05-16",
               "X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": UPSTREAM_KEY}
    body = {"model": "claude-test", "max_tokens": 64, "system": "Be brief.",
            "messages": [{"role": "user", "content": "Where does LTH-9 stand?"}]}
    async with httpx.AsyncClient(base_url=proxy_gateway) as client:
        answer = await client.post("/v1/m/in-path/messages", json=body, headers=headers)
        assert answer.status_code == 200, answer.text
        assert answer.json()["content"] == [{"type": "text", "text": "Noted: Where does LTH-9 stand?"}]
        assert upstream.headers[-1]["anthropic-beta"] == "tools-2024-05-16"
        assert upstream.headers[-1]["x-api-key"] == UPSTREAM_KEY
        refused = await client.post("/v1/m/in-path/messages", json=body, headers={**headers, "x-api-key": "nope"})
        assert refused.status_code == 401
    assert upstream.refused == []


async def test_an_agent_keeping_replies_as_text_is_recognised_not_stored_again(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str],
) -> None:
    # Anthropic replies come as content blocks; many agents keep only the text (`"content": "..."`), which the
    # API reads alike. The memory must recognise it: each message stored once, nothing taken for an edit.
    headers = {"x-api-key": tenant[1], "anthropic-version": "2023-06-01", "X-Lethe-Memory": "kept-as-text",
               "X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": UPSTREAM_KEY}
    transcript: list[dict] = []
    async with httpx.AsyncClient(base_url=proxy_gateway, timeout=60) as client:
        for turn in range(4):
            transcript.append({"role": "user", "content": f"Where does LTH-{turn} stand?"})
            answer = await client.post("/v1/messages", headers=headers, json={
                "model": "claude-test", "max_tokens": 64, "messages": transcript})
            assert answer.status_code == 200, answer.text
            transcript.append({"role": "assistant", "content": answer.json()["content"][0]["text"]})
        exported = await client.get("/v1/memories/kept-as-text/export",
                                    headers={"Authorization": f"Bearer {tenant[1]}"})
    assert exported.status_code == 200, exported.text
    held = exported.json()["messages"]
    assert [m["body"]["role"] for m in held] == ["user", "assistant"] * 4
    assert [m.get("edit_of") for m in held] == [None] * 8
