"""A note whose report never came is taken at decorate: the agent kept the model's reply (its `note` call, and
perhaps its own tool result for it) and hands it to the next decorate, which writes the note's facts once,
acknowledges the episodes it answers (they seal as usual) and sends a valid request. A late report of that
reply, or the same decorate resent, adds nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from engine.replies import note_calls
from engine.request_rules import problems
from store.db import Database
from tests.integration.facts.conftest import FACTS_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import scalar

FACTS = "SELECT count(*) FROM facts WHERE tenant_id = :t"
NOTE_CALLS = "SELECT count(*) FROM note_calls WHERE tenant_id = :t"
MESSAGES = "SELECT count(*) FROM messages WHERE tenant_id = :t"


def _reply(shape: str, call_id: str, note: str, first: int) -> dict[str, Any]:
    """The model's answer: a line of text and the note call the ask wanted."""
    text = "The launch stays on track."
    arguments = json.dumps({"notes": [{"note": note, "subject": f"ticket LTH-{1000 + first}",
                                       "object": "launch checklist", "milestone": True}]})
    if shape == "chat_completions":
        message = {"role": "assistant", "content": text, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "note", "arguments": arguments}}]}
        return {"id": "chatcmpl-late", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}
    return {"id": "resp_late", "object": "response", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
        {"type": "function_call", "call_id": call_id, "name": "note", "arguments": arguments}]}


def _held(shape: str, reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The reply as an agent keeps it in its history, note call and all."""
    return [reply["choices"][0]["message"]] if shape == "chat_completions" else list(reply["output"])


def _own_result(shape: str, call_id: str) -> dict[str, Any]:
    output = "Error: no tool named note."
    if shape == "chat_completions":
        return {"role": "tool", "tool_call_id": call_id, "content": output}
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _outputs(shape: str, request: dict[str, Any], call_id: str) -> list[str]:
    """The answers the request gives the note call."""
    if shape == "chat_completions":
        return [m["content"] for m in request["messages"] if m.get("tool_call_id") == call_id]
    return [i["output"] for i in request["input"] if i.get("type") == "function_call_output"
            and i.get("call_id") == call_id]


async def _decorate(http: httpx.AsyncClient, agent: ScriptedAgent, headers: dict[str, str]) -> dict[str, Any]:
    answer = await http.post(f"/v1/memories/{agent.memory_id}/decorate", json=agent._request(), headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert problems(body["request"]) == [], problems(body["request"])
    assert body["estimated_tokens"] <= FACTS_CEILING
    return body


@pytest.mark.parametrize(("shape", "agent_answers"), [
    ("chat_completions", True), ("chat_completions", False), ("responses", False)])
async def test_a_note_whose_report_never_came_is_taken_once_at_the_next_decorate(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, shape: str, agent_answers: bool
) -> None:
    tenant_id, key = tenant
    auth = {"Authorization": f"Bearer {key}"}
    # The model ignores the ask, so the episodes are still leaving when the lost reply comes.
    agent = ScriptedAgent(facts_http, key, "lost-report", ScriptedModel(shape, answers_notes=False), FACTS_CEILING)
    turn = await agent.until_asked() + 1
    agent._add({"role": "user", "content": f"Turn {turn}: where does the launch stand?"})
    asked = await _decorate(facts_http, agent, auth)
    assert asked["note_ask_turns"], "the ask is still pending"
    first = asked["note_ask_turns"][0]
    assert await scalar(db, FACTS, t=tenant_id) == 0

    # The model answers with the note; the agent keeps the reply but never reports it.
    call_id, note = f"call_note_lost_{turn}", f"Ticket LTH-{1000 + first} closed the launch checklist on day {turn}."
    reply = _reply(shape, call_id, note, first)
    for item in _held(shape, reply):
        agent._add(item)
    if agent_answers:
        agent._add(_own_result(shape, call_id))
    agent._add({"role": "user", "content": f"Turn {turn + 1}: and what comes next?"})
    body = agent._request()
    taken = await _decorate(facts_http, agent, auth)

    assert await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND note = :n",
                        t=tenant_id, n=note) == 1
    assert await scalar(db, NOTE_CALLS, t=tenant_id) == 1
    assert not taken["note_ask_turns"], "the note was taken: nothing is asked again"
    # The episodes the note answered are acknowledged, and sealed now their turns are over.
    states = await scalar(db, "SELECT array_agg(DISTINCT e.state || ':' || e.facts_written) FROM episodes e "
                              "JOIN note_calls n ON e.episode_key = ANY(n.episode_keys) AND n.tenant_id = e.tenant_id "
                              "WHERE e.tenant_id = :t", t=tenant_id)
    assert states == ["sealed:true"], states
    assert await scalar(db, "SELECT count(*) FROM outbox WHERE tenant_id = :t AND kind = 'facts_written'",
                        t=tenant_id) == 1
    # The note call is answered exactly once: by the agent's own result when it wrote one, else by Lethe's.
    outputs = _outputs(shape, taken["request"], call_id)
    assert outputs == (["Error: no tool named note."] if agent_answers else ["Recorded 1 fact."]), outputs
    messages = await scalar(db, MESSAGES, t=tenant_id)

    # The same decorate resent (a retry under another key) finds the note taken and the messages held.
    retried = await facts_http.post("/v1/memories/lost-report/decorate", json=body,
                                    headers={**auth, "Idempotency-Key": f"retry-{turn}"})
    assert retried.status_code == 200, retried.text
    assert problems(retried.json()["request"]) == []
    # The late report of the reply: answered as ever, but it adds no fact and no message.
    late = await facts_http.post("/v1/memories/lost-report/report", headers=auth, json={
        "decorate_id": asked["decorate_id"], "response": reply})
    assert late.status_code == 200, late.text
    assert note_calls(late.json()["response"]) == []  # the agent never sees the note call
    assert await scalar(db, FACTS, t=tenant_id) == 1
    assert await scalar(db, NOTE_CALLS, t=tenant_id) == 1
    assert await scalar(db, MESSAGES, t=tenant_id) == messages
