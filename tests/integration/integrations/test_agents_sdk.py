"""`lethe.integrations.agents` and examples/agents_sdk_agent.py against the gateway and the local upstream."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner
from openai import AsyncOpenAI

from examples import agents_sdk_agent
from lethe.client import AsyncLethe, LetheAPIError
from lethe.integrations.agents import LetheSession
from store.db import Database
from tests.fake_upstream import FakeUpstream
from tests.integration.integrations.support import (
    check_turns,
    is_facts_block,
    is_note_ask,
    questions,
    record_decorates,
    text_of,
    until_facts_block,
)
from tests.integration.workflows.lane_support import lane_idle

TURNS = 11


def _check_requests(upstream: FakeUpstream, decorated: list[dict[str, Any]], asked: list[str]) -> None:
    """Lethe's view reached the model: the note ask with its tool, then the facts block in place of the turns
    that left (the first question among them)."""
    asking = [r for r in upstream.requests if any(is_note_ask(item) for item in r["input"])]
    assert asking and all("note" in {t.get("name") for t in r["tools"]} for r in asking)
    # Once the memory showed a facts block, a request opened with it (a later fade may forget the episodes it
    # came from, and the block with them: seed 001 recalls a forgotten episode's facts, it does not list them).
    last = upstream.requests[-1]["input"]
    assert any(is_facts_block(r["input"][0]) for r in upstream.requests if r["input"])
    assert asked[0] not in [text_of(item) for item in last]
    assert upstream.notes_written >= 1
    # Each request is one decorate handed back; where Lethe asked after the call's tools were settled, without
    # its closing ask (the next call carries it, with the tool).
    handed = [d["input"] for d in decorated] + [d["input"][:-1] for d in decorated if is_note_ask(d["input"][-1])]
    assert all(request["input"] in handed for request in upstream.requests)


async def test_the_example_keeps_every_turn_once_and_its_model_sees_lethes_view(
    small_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    decorated = record_decorates(monkeypatch)
    asked = questions(TURNS)
    answers: list[str] = []

    async def turn(question: str) -> None:
        answers.extend(await agents_sdk_agent.converse(small_gateway, tenant[1], upstream.base_url, "sk-fake",
                                                       memory_id="agents-example", questions=[question],
                                                       model="gpt-test"))

    for question in list(asked):
        await turn(question)
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        await until_facts_block(lethe, "agents-example", asked, turn)
    assert "owner Dana" in answers[1] and all(answers)  # its own tool ran; the note tool never answered
    # Every model call sent the request one decorate handed back (the filter), the note ask and facts too.
    _check_requests(upstream, decorated, asked)
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        export = await lethe.export("agents-example")
        check_turns(export, asked, answers)
        assert [c["taken"] for c in export["note_calls"]] == [True] * upstream.notes_written
        assert (await lethe.erase("agents-example")).erased  # ends its lane: the next tests keep the worker


async def test_the_session_alone_sends_lethes_view_from_get_items(
    small_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the filter, each run's model input is what get_items returned, then the new user message."""
    decorated = record_decorates(monkeypatch)
    asked = questions(TURNS)
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        session = LetheSession("agents-alone", lethe, model="gpt-test")
        agent = Agent(name="assistant", instructions="Be brief.", tools=[agents_sdk_agent.lookup, session.note_tool],
                      model=OpenAIResponsesModel("gpt-test", AsyncOpenAI(base_url=upstream.base_url, api_key="sk")))
        answers: list[str] = []
        views: list[list[Any]] = []

        async def turn(question: str) -> None:
            views.append(await session.get_items())
            upstream.requests.clear()
            result = await Runner.run(agent, question, session=session, run_config=RunConfig(tracing_disabled=True))
            answers.append(str(result.final_output))
            first = upstream.requests[0]["input"]
            assert first == views[-1] + [{"content": question, "role": "user"}]

        for question in list(asked):
            await turn(question)
        await until_facts_block(lethe, "agents-alone", asked, turn)
        # Once faded and noted, the view opens with the facts block and no longer holds the first question.
        final = await session.get_items()
        assert any(is_facts_block(view[0]) for view in [*views, final] if view)
        assert asked[0] not in [text_of(item) for item in final]
        assert any(is_note_ask(item) for view in views for item in view)
        assert all(view in [d["input"] for d in decorated] for view in views if view)
        assert await session.get_items(limit=2) == final[-2:]
        export = await lethe.export("agents-alone")
        check_turns(export, asked, answers)
        assert upstream.notes_written >= 1
        assert [c["taken"] for c in export["note_calls"]] == [True] * len(export["note_calls"])
        # Clearing the session erases the memory.
        await session.clear_session()
        assert await session.get_items() == []
        with pytest.raises(LetheAPIError) as gone:
            await lethe.state("agents-alone")
        assert gone.value.status == 404


async def test_streamed_runs_save_late_and_still_send_each_message_through_lethe(
    small_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A streamed run saves its input after the first model call: the filter takes the new message from the
    call's own input, and the late save adds nothing twice."""
    decorated = record_decorates(monkeypatch)
    asked = questions(TURNS)
    async with AsyncLethe(small_gateway, tenant[1]) as lethe:
        session = LetheSession("agents-streamed", lethe, model="gpt-test")
        agent = Agent(name="assistant", instructions="Be brief.", tools=[agents_sdk_agent.lookup, session.note_tool],
                      model=OpenAIResponsesModel("gpt-test", AsyncOpenAI(base_url=upstream.base_url, api_key="sk")))
        answers: list[str] = []

        async def turn(question: str) -> None:
            result = Runner.run_streamed(agent, question, session=session,
                                         run_config=session.run_config(tracing_disabled=True))
            async for _ in result.stream_events():
                pass
            answers.append(str(result.final_output))

        for question in list(asked):
            await turn(question)
        await until_facts_block(lethe, "agents-streamed", asked, turn)
        assert "owner Dana" in answers[1]
        _check_requests(upstream, decorated, asked)
        check_turns(await lethe.export("agents-streamed"), asked, answers)
        assert (await lethe.erase("agents-streamed")).erased


async def test_the_filter_brings_the_new_messages_recall_block_and_get_items_alone_cannot(
    recall_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], db: Database,
) -> None:
    """Recall on: a question about a turn that left gets a recall block. With the filter the model reads it just
    before the question; with the session alone, read before the question arrived, it cannot."""
    asked = [*questions(TURNS), "What did the user discuss in Turn 8 about the pricing table, topic 1?"]
    async with AsyncLethe(recall_gateway, tenant[1]) as lethe:
        for memory_id, filtered in (("agents-recall", True), ("agents-recall-alone", False)):
            session = LetheSession(memory_id, lethe, model="gpt-test")
            agent = Agent(name="assistant", instructions="Be brief.", tools=[session.note_tool],
                          model=OpenAIResponsesModel("gpt-test", AsyncOpenAI(base_url=upstream.base_url,
                                                                             api_key="sk")))
            config = session.run_config(tracing_disabled=True) if filtered else RunConfig(tracing_disabled=True)
            for question in asked[:-1]:
                await Runner.run(agent, question, session=session, run_config=config)
            # The lane has taken the notes' facts into the graph and indexed the words of the turns that left:
            # the facts block may already show every fact recall finds, but not those words.
            await lane_idle(db, tenant[0])
            first = len(upstream.requests)
            await Runner.run(agent, asked[-1], session=session, run_config=config)
            sent = upstream.requests[first]["input"]  # the last question's first call (a note ask may close it)
            at = sent.index({"content": asked[-1], "role": "user"})
            assert text_of(sent[at - 1]).startswith("[recalled from earlier in this conversation]") == filtered
            export = await lethe.export(memory_id)
            assert max(block["turn"] for block in export["recall_blocks"]) == len(asked)  # made either way
            assert (await lethe.erase(memory_id)).erased
