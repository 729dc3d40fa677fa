"""Whole conversations through decorate and report, with an 8000-token ceiling: fade, note ask, seal, forget."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.integration.hot_path.conftest import SMALL_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _facts_block(request: dict) -> str:
    items = request.get("messages") or request.get("input")
    return "\n".join(str(m.get("content")) for m in items if m.get("role") in ("system", "developer")
                     and str(m.get("content")).startswith("Facts kept from"))


@pytest.mark.parametrize(("shape", "turns"), [("chat_completions", 300), ("responses", 120)])
async def test_long_conversation_fades_seals_and_forgets_within_the_ceiling(
    small_http: httpx.AsyncClient, tenant: tuple[str, str], shape: str, turns: int
) -> None:
    agent = ScriptedAgent(small_http, tenant[1], f"long-{shape}", ScriptedModel(shape), SMALL_CEILING)
    for turn in range(1, turns + 1):
        await agent.turn(turn)

    asked = [d for d in agent.decorations if d["note_ask_turns"]]
    assert asked, "no note ask in a conversation far past its ceiling"
    for decoration in asked:  # the ask closes the request and carries the note tool
        items = decoration["request"]["messages" if shape == "chat_completions" else "input"]
        assert "is leaving your live context" in str(items[-1]["content"])
        tools = decoration["request"]["tools"]
        assert any((t.get("function") or t).get("name") == "note" for t in tools)

    state = (await small_http.get(f"/v1/memories/long-{shape}", headers=_auth(tenant[1]))).json()
    extra = turns
    while {e["state"] for e in state["episodes"]} & {"leaving", "sealed"} != {"sealed"}:
        # A fade is under way (or everything sealed was forgotten): a few more turns let the answered
        # note seal, so the facts block can be checked against the export.
        extra += 1
        assert extra < turns + 10, state["episodes"]
        await agent.turn(extra)
        state = (await small_http.get(f"/v1/memories/long-{shape}", headers=_auth(tenant[1]))).json()
    states = {e["state"] for e in state["episodes"]}
    assert {"sealed", "forgotten"} <= states, states
    assert state["facts"] >= len(agent.model.asks_seen) > 0

    export = json.loads((await small_http.get(f"/v1/memories/long-{shape}/export", headers=_auth(tenant[1]))).text)
    facts = {f["fact_key"]: f for f in export["facts"]}
    episodes = {e["episode_key"]: e for e in export["episodes"]}
    last_block = _facts_block(agent.decorations[-1]["request"])
    sealed_fact_seen = forgotten_fact_missing = False
    for fact in facts.values():
        owners = {episodes[k]["state"] for k in fact["episode_keys"]}
        if owners == {"forgotten"}:
            assert fact["note"] not in last_block  # forgotten: out of the facts block, still in the export
            forgotten_fact_missing = True
        if "sealed" in owners:
            assert fact["note"] in last_block
            sealed_fact_seen = True
    assert sealed_fact_seen and forgotten_fact_missing, sorted(
        (f["fact_key"], sorted(episodes[k]["state"] for k in f["episode_keys"])) for f in facts.values())
    assert len(export["messages"]) >= turns * 2
    # Erased, which ends its workflow: the shared worker does not spend the next tests on this memory's lane.
    erased = await small_http.delete(f"/v1/memories/long-{shape}", headers=_auth(tenant[1]))
    assert erased.json()["erased"], erased.text


async def test_ignored_note_ask_is_asked_again_on_the_next_call(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    model = ScriptedModel("chat_completions", answers_notes=False)
    agent = ScriptedAgent(small_http, tenant[1], "ignored", model, SMALL_CEILING)
    turn = await agent.until_asked()
    first_ask = next(i for i, d in enumerate(agent.decorations) if d["note_ask_turns"])
    # The model ignored the ask and called a tool: the call that carries the tool's output asks again.
    # Should that output carry the request past the ceiling, the least active leaving episodes seal without
    # facts, only as many as needed; the ask goes on for the rest.
    following = agent.decorations[first_ask + 1]
    asked, again = agent.decorations[first_ask]["note_ask_turns"], following["note_ask_turns"]
    assert again is not None and asked[0] <= again[0] <= again[1] <= asked[1], (asked, again)
    state = (await small_http.get("/v1/memories/ignored", headers=_auth(tenant[1]))).json()
    assert state["note_ask"]["asks"] >= 2 or any(e["sealed_without_facts"] for e in state["episodes"])
    # Ignored for good, the ceiling stays a hard limit: the leaving episodes seal without facts, and every
    # request stays within the ceiling (checked on each call) and valid.
    for more in range(turn + 1, turn + 15):
        await agent.turn(more)
    state = (await small_http.get("/v1/memories/ignored", headers=_auth(tenant[1]))).json()
    assert any(e["sealed_without_facts"] for e in state["episodes"])
    assert state["facts"] == 0


async def test_answered_note_seals_at_the_next_decorate_and_its_facts_appear(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    model = ScriptedModel("chat_completions", note_only_every=1000)
    agent = ScriptedAgent(small_http, tenant[1], "answered", model, SMALL_CEILING)
    turn = await agent.until_asked()
    note_turns = model.asks_seen[0]
    await agent.turn(turn + 1)
    state = (await small_http.get("/v1/memories/answered", headers=_auth(tenant[1]))).json()
    sealed = [e for e in state["episodes"] if e["state"] == "sealed"]
    assert sealed and all(e["facts_written"] for e in sealed)
    assert f"LTH-{1000 + note_turns[0]}" in _facts_block(agent.decorations[-1]["request"])
