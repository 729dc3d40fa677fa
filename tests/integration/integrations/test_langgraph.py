"""`lethe.integrations.langgraph` and examples/langgraph_agent.py against the gateway and the local upstream."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from openai import OpenAI

from examples import langgraph_agent
from lethe.client import AsyncLethe
from lethe.integrations.langgraph import LetheHooks
from store.db import Database
from tests.fake_upstream import FakeUpstream
from tests.integration.integrations.support import (
    check_turns,
    is_facts_block,
    is_note_ask,
    questions,
    record_decorates,
    text_of,
)
from tests.integration.workflows.lane_support import lane_idle

TURNS = 11

pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")


def _check_requests(upstream: FakeUpstream, decorated: list[dict[str, Any]], asked: list[str]) -> None:
    """Lethe's view reached the model: every request is one decorate handed back; the note ask came with its
    tool, and the facts block took the place of the turns that left (the first question among them)."""
    assert all(request["messages"] in [d["messages"] for d in decorated] for request in upstream.requests)
    asking = [r for r in upstream.requests if any(is_note_ask(m) for m in r["messages"])]
    assert asking and all("note" in {t["function"]["name"] for t in r["tools"]} for r in asking)
    assert all({t["function"]["name"] for t in r["tools"]} == {"lookup"} for r in upstream.requests if r not in asking)
    last = upstream.requests[-1]["messages"]
    # After the instructions, once the first note's facts are in (when depends on the lane, not on the turn).
    assert any(is_facts_block(m) for r in upstream.requests for m in r["messages"][:2])
    assert asked[0] not in [text_of(m) for m in last]
    assert upstream.notes_written >= 1


async def test_the_example_keeps_every_turn_once_and_its_model_sees_lethes_view(
    small_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    decorated = record_decorates(monkeypatch)
    asked = questions(TURNS)
    # In a thread: the example blocks, and the gateway shares this event loop.
    answers = await asyncio.to_thread(langgraph_agent.run, small_gateway, tenant[1], upstream.base_url, "sk-fake",
                                      memory_id="langgraph-example", questions=asked, model="gpt-test")
    assert "owner Dana" in answers[1] and all(answers)
    _check_requests(upstream, decorated, asked)
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        export = await lethe.export("langgraph-example")
        check_turns(export, asked, answers)
        assert [c["taken"] for c in export["note_calls"]] == [True] * upstream.notes_written
        assert (await lethe.erase("langgraph-example")).erased  # ends its lane: the next tests keep the worker


async def test_async_hooks_keep_the_whole_history_in_the_graph_and_send_lethes_view(
    small_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With an AsyncLethe, ainvoke, and the memory named by the thread: the graph's state keeps every message
    (the first question too), the model gets Lethe's view, and the note never reaches the graph."""
    decorated = record_decorates(monkeypatch)
    asked = questions(TURNS)
    chat = langgraph_agent.CompatibleChat(client=OpenAI(base_url=upstream.base_url, api_key="sk"), model="gpt-test")
    tools = [langgraph_agent.lookup]
    config: Any = {"configurable": {"thread_id": "langgraph-thread"}}
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        hooks = LetheHooks(lethe, model="gpt-test")
        agent = create_react_agent(hooks.model(chat, tools), tools, pre_model_hook=hooks.pre_model_hook,
                                   checkpointer=InMemorySaver())
        answers = []
        for question in asked:
            state = await agent.ainvoke({"messages": [HumanMessage(question)]}, config)
            answers.append(str(state["messages"][-1].content))
        messages = state["messages"]
        assert [m.content for m in messages if isinstance(m, HumanMessage)] == asked
        assert not any(c["name"] == "note" for m in messages if isinstance(m, AIMessage) for c in m.tool_calls)
        assert [m.content for m in messages if isinstance(m, ToolMessage)] == [langgraph_agent.TICKETS["LTH-7"]]
        # The graph holds the first question; the model's last request, Lethe's view, no longer does.
        _check_requests(upstream, decorated, asked)
        export = await lethe.export("langgraph-thread")
        check_turns(export, asked, answers)
        assert (await lethe.erase("langgraph-thread")).erased


def test_the_model_needs_the_pre_model_hook(upstream: FakeUpstream) -> None:
    hooks = LetheHooks(AsyncLethe("http://127.0.0.1:9", "key"), "m", model="gpt-test")
    chat = langgraph_agent.CompatibleChat(client=OpenAI(base_url=upstream.base_url, api_key="sk"), model="gpt-test")
    agent = create_react_agent(hooks.model(chat, []), [])
    with pytest.raises(RuntimeError, match="pre_model_hook"):
        agent.invoke({"messages": [HumanMessage("Hello")]})


async def test_a_question_about_turns_that_left_reaches_the_model_with_its_recall_block(
    recall_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], db: Database,
) -> None:
    """Recall on: the pre-model hook decorates with the new message in it, so its recall block comes first."""
    asked = [*questions(TURNS), "What did the user discuss in Turn 8 about the pricing table, topic 1?"]
    chat = langgraph_agent.CompatibleChat(client=OpenAI(base_url=upstream.base_url, api_key="sk"), model="gpt-test")
    config: Any = {"configurable": {"thread_id": "langgraph-recall"}}
    async with AsyncLethe(recall_gateway, tenant[1]) as lethe:
        hooks = LetheHooks(lethe, model="gpt-test")
        agent = create_react_agent(hooks.model(chat), [], pre_model_hook=hooks.pre_model_hook,
                                   checkpointer=InMemorySaver())
        for question in asked[:-1]:
            await agent.ainvoke({"messages": [HumanMessage(question)]}, config)
        # The lane has taken the notes' facts into the graph and indexed the words of the turns that left: the
        # facts block may already show every fact recall finds, but not those words.
        await lane_idle(db, tenant[0])
        first = len(upstream.requests)
        await agent.ainvoke({"messages": [HumanMessage(asked[-1])]}, config)
        sent = upstream.requests[first]["messages"]
        at = sent.index({"role": "user", "content": asked[-1]})
        assert text_of(sent[at - 1]).startswith("[recalled from earlier in this conversation]")
        assert (await lethe.erase("langgraph-recall")).erased
