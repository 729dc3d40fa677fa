"""A fixture conversation whose model answers each note ask with the next batch of facts the test scripted.

Driven through decorate and report by the shared scripted agent; the graph is then read back through the
export, the memory's state and the facts block, as a user would check it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from store.db import Database
from tests.integration.graph.conftest import GRAPH_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import scalar
from tests.support import eventually

Note = dict[str, Any]

# Three note calls, in order: the people, a restatement, a change of date, identifiers, a second Dana.
BATCHES: list[list[Note]] = [
    [
        {"note": "Dana owns the checkout migration.", "subject": "Dana", "object": "checkout migration",
         "milestone": False, "source": "user"},
        {"note": "Order ORD-55120 was refunded twice by mistake.", "subject": "order ORD-55120",
         "object": "refund", "milestone": False, "source": "tool"},
    ],
    [
        {"note": "Dana Whitfield approved the pricing copy.", "subject": "Dana Whitfield", "object": "pricing copy",
         "milestone": True, "source": "user"},
        {"note": "The launch is on Wednesday.", "subject": "launch", "object": "Wednesday", "milestone": False,
         "source": "user"},
    ],
    [
        {"note": "Our PM Dana wants the tax table before the launch.", "subject": "our PM Dana",
         "object": "tax table", "milestone": False, "source": "user"},
        {"note": "The checkout migration is owned by Dana.", "subject": "checkout migration", "object": "Dana",
         "milestone": False, "source": "assistant"},
        {"note": "The launch moved to Thursday.", "subject": "launch", "object": "Thursday", "milestone": False,
         "source": "user"},
        {"note": "Dana Lee runs the design review.", "subject": "Dana Lee", "object": "design review",
         "milestone": False, "source": "user"},
        {"note": "The flag flag_checkout_v3 lives on database db-kestrel-9.", "subject": "flag_checkout_v3",
         "object": "database db-kestrel-9", "milestone": False, "source": "tool"},
    ],
]


@dataclass
class GraphModel(ScriptedModel):
    """The scripted model, answering note asks with the test's batches (nothing worth keeping once they run out)."""

    batches: list[list[Note]] = field(default_factory=list)
    written: list[list[Note]] = field(default_factory=list)

    def reply(self, request: dict[str, Any], turn: int, note_ask_turns: list[int] | None) -> dict[str, Any]:
        if not note_ask_turns:
            return super().reply(request, turn, None)
        notes = self.batches.pop(0) if self.batches else [{"note": "", "subject": "", "object": "",
                                                            "milestone": False}]
        if notes[0]["note"]:
            self.written.append(notes)
        text = f"Answer for turn {turn}."
        return self._response(text, [(f"call_note_{turn}", "note", json.dumps({"notes": notes}))])


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def converse(http: httpx.AsyncClient, key: str, memory_id: str, batches: Sequence[list[Note]]) -> ScriptedAgent:
    """Talk until every batch has been written as a note, then two turns more, so they seal."""
    model = GraphModel("chat_completions", note_only_every=1000, batches=[list(b) for b in batches])
    agent = ScriptedAgent(http, key, memory_id, model, GRAPH_CEILING)
    turn = 0
    while model.batches:
        turn += 1
        assert turn < 400, "the note asks never came"
        await agent.turn(turn)
    for more in (1, 2):
        await agent.turn(turn + more)
    return agent


async def integrated(db: Database, tenant_id: str) -> bool:
    """Every fact is in the graph and every sealed episode has its passages (traces may still be coming)."""
    pending = await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND integrated_at IS NULL",
                           t=tenant_id)
    unindexed = await scalar(db, (
        "SELECT count(*) FROM episodes e WHERE e.tenant_id = :t AND e.state IN ('sealed', 'forgotten') AND NOT "
        "EXISTS (SELECT 1 FROM passages p WHERE p.memory_pk = e.memory_pk AND p.episode_key = e.episode_key)"),
        t=tenant_id)
    return pending == 0 and unindexed == 0


async def settle(db: Database, tenant_id: str) -> None:
    await eventually(lambda: integrated(db, tenant_id), timeout=240)


async def export(http: httpx.AsyncClient, key: str, memory_id: str) -> dict[str, Any]:
    response = await http.get(f"/v1/memories/{memory_id}/export", headers=auth(key))
    assert response.status_code == 200, response.text
    return json.loads(response.content)


def facts_block(request: dict[str, Any]) -> str:
    items = request.get("messages") or request.get("input") or []
    return "\n".join(str(m.get("content")) for m in items if m.get("role") in ("system", "developer")
                     and str(m.get("content")).startswith("Facts kept from"))


def entities_by_alias(doc: dict[str, Any]) -> dict[str, str]:
    """Every name the memory's entities were given, to the canonical name of the entity it denotes."""
    names = {e["id"]: e["name"] for e in doc["entities"]}
    return {a["name"]: names[a["entity_id"]] for a in doc["entity_aliases"]}
