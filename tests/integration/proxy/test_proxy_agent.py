"""An agent that has never heard of the note tool, 100 turns through the proxy at an 8000-token ceiling."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
from openai import AsyncOpenAI

from providers.tokens import TiktokenCounter
from tests.fake_upstream import FakeUpstream
from tests.integration.proxy.agents import ChatAgent, ResponsesAgent
from tests.integration.proxy.conftest import PROXY_CEILING

TOPICS = ["pricing page", "checkout migration", "tax table", "legal review", "launch date", "QA rota"]


def _question(turn: int, *, paragraphs: int) -> str:
    topic = TOPICS[(turn // 5) % len(TOPICS)]
    ask = "Please lookup" if turn % 6 == 0 else "Tell me"
    return (f"Turn {turn}. {ask} the {topic}: what changed since yesterday, who owns the next step, and which "
            f"numbers moved? Ticket LTH-{1000 + turn} has {turn * 17} units and {turn % 9} blockers to clear. "
            f"The rollout keeps the pricing table, the refund line and the tax rates in step across regions, "
            f"and the partner API waits on the legal review of clause {turn % 13} before the launch date." * paragraphs)


async def _run(agent: ChatAgent | ResponsesAgent, turns: int, *, paragraphs: int = 1) -> list[str]:
    questions = [_question(turn, paragraphs=paragraphs) for turn in range(1, turns + 1)]
    for turn, question in enumerate(questions, start=1):
        await agent.ask(question, stream=turn % 2 == 1)  # streamed and not, alternately
    return questions


def _carries_note_ask(request: dict) -> bool:
    return any((tool.get("function") or tool).get("name") == "note" for tool in request.get("tools") or [])


async def _check(agent: ChatAgent | ResponsesAgent, questions: list[str], upstream: FakeUpstream,
                 http: httpx.AsyncClient, tenant: tuple[str, str], memory_id: str) -> None:
    auth = {"Authorization": f"Bearer {tenant[1]}"}
    export = json.loads((await http.get(f"/v1/memories/{memory_id}/export", headers=auth)).text)
    # It never sees a note call, nor an empty answer a note call left behind.
    assert all(name != "note" for reply in agent.replies for _, name, _ in reply.calls)
    assert all(reply.text or reply.calls for reply in agent.replies)
    assert any(reply.calls for reply in agent.replies)
    # Its notes were taken, every one of them.
    assert upstream.notes_written >= 1
    assert [c["taken"] for c in export["note_calls"]] == [True] * upstream.notes_written
    assert len(export["facts"]) == upstream.notes_written
    assert {e["state"] for e in export["episodes"]} & {"sealed", "forgotten"}
    # The first note was the whole reply: the gateway called again on its own, unseen by the agent.
    assert len(upstream.requests) > len(agent.replies)
    # Every request it caused is within the ceiling, by the provider's own count (the fake counts with
    # tiktoken, as it reports usage), the requests that carry the note ask and its tool too.
    counter = TiktokenCounter()
    assert len(export["decorations"]) == len(upstream.requests)
    sizes = [(counter.count_request(request), _carries_note_ask(request)) for request in upstream.requests]
    assert any(asked for _, asked in sizes)
    assert max(size for size, _ in sizes) <= PROXY_CEILING, sorted(sizes)[-5:]
    # The memory holds every turn, once, and every answer the agent saw.
    users = [m["body"]["content"] for m in export["messages"] if m["role"] == "user"]
    assert users == questions
    stored = json.dumps(export["messages"])
    assert all(json.dumps(reply.text)[1:-1] in stored for reply in agent.replies if reply.text)
    # Erased, which ends its workflow: the shared worker does not spend the next tests on this memory's lane.
    assert (await http.delete(f"/v1/memories/{memory_id}", headers=auth)).json()["erased"]


async def test_hundred_turns_of_an_agent_unaware_of_notes_stay_within_the_ceiling(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str],
) -> None:
    agent = ChatAgent(agent_client("hundred"))
    questions = await _run(agent, 100)
    await _check(agent, questions, upstream, http, tenant, "hundred")


async def test_twenty_four_turns_of_a_responses_agent_unaware_of_notes(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str],
) -> None:
    agent = ResponsesAgent(agent_client("responses-24"))
    questions = await _run(agent, 24, paragraphs=5)
    await _check(agent, questions, upstream, http, tenant, "responses-24")

