"""Evidence, not echoes: when the model's note restates, word for word, a fact Lethe already holds and showed it
(and the turns it was asked about never said it), no new fact is written and the held fact gains no trace; the
note's own new facts are written as ever."""

from __future__ import annotations

import json
from typing import Any

import httpx

from store.db import Database
from tests.integration.facts.conftest import FACTS_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import lane_idle, scalar


def _shown(request: dict[str, Any]) -> str:
    """What the request shows the model: its messages' contents, not the calls it made (its first note among
    them) nor their results."""
    return "\n".join(json.dumps(m.get("content"), ensure_ascii=False) for m in request["messages"]
                     if m.get("role") != "tool")


class EchoingModel(ScriptedModel):
    """Once a request shows its first note's fact word for word (a recall block, the facts block), its next note
    starts with that fact again, before the new one."""

    first: dict[str, Any] | None = None
    # The note ask answered with the echo, once it was.
    echoed_ask: list[int] | None = None

    def reply(self, request: dict[str, Any], turn: int, note_ask_turns: list[int] | None) -> dict[str, Any]:
        response = super().reply(request, turn, note_ask_turns)
        for call in response["choices"][0]["message"].get("tool_calls") or []:
            if call["function"]["name"] != "note":
                continue
            notes = json.loads(call["function"]["arguments"])["notes"]
            if self.first is None:
                self.first = notes[0]
            elif self.echoed_ask is None and self.first["note"] in _shown(request):
                call["function"]["arguments"] = json.dumps({"notes": [self.first, *notes]})
                self.echoed_ask = note_ask_turns
        return response


async def test_a_note_restating_a_held_fact_word_for_word_adds_no_fact_and_no_trace(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    model = EchoingModel("chat_completions", note_only_every=1000)
    agent = ScriptedAgent(facts_http, key, "echoes", model, FACTS_CEILING)
    turn = await agent.until_asked()
    assert model.first is not None
    echo = model.first["note"]
    await lane_idle(db, tenant_id)
    same = "SELECT count(*) FROM facts WHERE tenant_id = :t AND note = :n"
    traced = ("SELECT count(*) FROM traces WHERE tenant_id = :t AND fact_key IN "
              "(SELECT fact_key FROM facts WHERE tenant_id = :t AND note = :n)")
    assert await scalar(db, same, t=tenant_id, n=echo) == 1
    traces_before = await scalar(db, traced, t=tenant_id, n=echo)

    while model.echoed_ask is None:  # on to a note ask the model answers with the echo first, the fact shown
        turn += 1
        assert turn < 200, "never asked for a note while the held fact was shown"
        await agent.turn(turn)
    await lane_idle(db, tenant_id)
    own = f"settled ticket LTH-{1000 + model.echoed_ask[0]}"
    assert await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND note LIKE :n",
                        t=tenant_id, n=f"%{own}%") == 1  # the note's own fact is written
    assert await scalar(db, same, t=tenant_id, n=echo) == 1  # the echo is not
    assert await scalar(db, traced, t=tenant_id, n=echo) == traces_before  # nor does it strengthen the held one
