"""Claim kinds on the real stack: a noted constraint stays in front of the model long after its episode is
forgotten while the facts beside it fade; an open question is settled by a later note; a user's correction and a
user's change of mind are told apart; the export, the facts listing and the search show kinds."""

from __future__ import annotations

from typing import Any

import httpx

from store.db import Database
from tests.integration.graph.conftest import GRAPH_CEILING
from tests.integration.graph.conversation import GraphModel, Note, auth, export, facts_block, settle
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel

CONSTRAINT = "Deploys to cluster prod-eu-1 must never run on Fridays."
BESIDE = "Order ORD-77310 was refunded twice by mistake."
QUESTION = "Which region will host the Acme tenant database?"
ANSWER = "The Acme tenant database will be hosted in region eu-central-2."

BATCHES: list[list[Note]] = [
    [
        {"note": CONSTRAINT, "subject": "cluster prod-eu-1", "object": "Friday deploys", "milestone": False,
         "source": "user", "kind": "constraint"},
        {"note": BESIDE, "subject": "order ORD-77310", "object": "refund", "milestone": False, "source": "tool"},
        {"note": QUESTION, "subject": "Acme tenant database", "object": "region", "milestone": False,
         "source": "user", "kind": "open_question"},
        {"note": "The release freeze is on Monday.", "subject": "release freeze", "object": "Monday",
         "milestone": False, "source": "assistant"},
        {"note": "The design demo is on Wednesday.", "subject": "design demo", "object": "Wednesday",
         "milestone": False, "source": "user", "kind": "decision"},
    ],
    [
        {"note": ANSWER, "subject": "Acme tenant database", "object": "region eu-central-2", "milestone": False,
         "source": "user", "kind": "decision", "settles": "which region hosts the Acme tenant database"},
        {"note": "The release freeze moved to Tuesday.", "subject": "release freeze", "object": "Tuesday",
         "milestone": False, "source": "user"},
        {"note": "The design demo moved to Thursday.", "subject": "design demo", "object": "Thursday",
         "milestone": False, "source": "user", "kind": "decision"},
    ],
]


class KindsModel(GraphModel):
    """The test's batches first, then the scripted model's own notes: facts keep coming, so old ones fade."""

    def reply(self, request: dict[str, Any], turn: int, note_ask_turns: list[int] | None) -> dict[str, Any]:
        if note_ask_turns and not self.batches:
            return ScriptedModel.reply(self, request, turn, note_ask_turns)
        return super().reply(request, turn, note_ask_turns)


def _episodes_of(doc: dict[str, Any], note: str) -> set[str]:
    return {key for f in doc["facts"] if f["note"] == note for key in f["episode_keys"]}


def _states(doc: dict[str, Any], keys: set[str]) -> set[str]:
    return {e["state"] for e in doc["episodes"] if e["episode_key"] in keys}


async def test_a_constraint_stays_in_front_while_the_facts_beside_it_fade(
    graph_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    model = KindsModel("chat_completions", note_only_every=1000, batches=[list(b) for b in BATCHES])
    agent = ScriptedAgent(graph_http, key, "kinds", model, GRAPH_CEILING)
    turn, sealed_at, forgotten_at = 0, None, None
    while forgotten_at is None or turn < forgotten_at + 5:
        turn += 1
        assert turn < 400, "the constraint's episode was never forgotten"
        await agent.turn(turn)
        if model.batches or turn % 5:
            continue
        doc = await export(graph_http, key, "kinds")
        states = _states(doc, _episodes_of(doc, CONSTRAINT))
        if sealed_at is None and states & {"sealed", "forgotten"}:
            sealed_at = len(agent.decorations)
        if forgotten_at is None and states == {"forgotten"}:
            forgotten_at = turn
    assert sealed_at is not None
    # In front of the model at every call since its episode left the view, and still after it was forgotten ...
    for decoration in agent.decorations[sealed_at:]:
        assert CONSTRAINT in facts_block(decoration["request"]), decoration["request"]
    last = facts_block(agent.decorations[-1]["request"])
    assert "(constraint, still binding) " + CONSTRAINT in last
    # ... while the fact noted beside it left the facts block with its episode.
    assert BESIDE not in last

    await settle(db, tenant_id)
    doc = await export(graph_http, key, "kinds")
    facts = {f["note"]: f for f in doc["facts"]}
    assert facts[CONSTRAINT]["kind"] == "constraint" and facts[QUESTION]["kind"] == "open_question"
    assert facts[BESIDE]["kind"] == "fact"
    # The open question is settled by the fact that answered it, dated; nothing is retired.
    assert facts[QUESTION]["settled_by"] == facts[ANSWER]["fact_key"] and facts[QUESTION]["settled_at"]
    assert facts[QUESTION]["retired_at"] is None
    # The user overruling the assistant is a correction; the user changing their own mind, a revision.
    freeze = facts["The release freeze is on Monday."]
    assert freeze["retired_as"] == "correction", freeze
    assert facts["The release freeze moved to Tuesday."]["kind"] == "correction"
    demo_then, demo_now = facts["The design demo is on Wednesday."], facts["The design demo moved to Thursday."]
    assert demo_then["retired_as"] == "revision" and demo_now["revises"] == demo_then["fact_key"]

    listed = (await graph_http.get("/v1/memories/kinds/facts", headers=auth(key))).json()["facts"]
    assert {f["note"]: f["kind"] for f in listed}[CONSTRAINT] == "constraint"
    found = (await graph_http.get("/v1/memories/kinds/facts/search", params={"q": "Friday deploys prod-eu-1"},
                                  headers=auth(key))).json()["results"]
    assert any(h.get("claim_kind") == "constraint" and h.get("note") == CONSTRAINT for h in found), found


async def test_an_added_fact_takes_a_kind(graph_http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    _, key = tenant
    model = KindsModel("chat_completions", note_only_every=1000)
    await ScriptedAgent(graph_http, key, "kinds-added", model, GRAPH_CEILING).turn(1)
    made = await graph_http.post("/v1/memories/kinds-added/facts", headers=auth(key), json={
        "note": "Invoices must be issued in EUR.", "subject": "invoices", "object": "EUR", "kind": "constraint"})
    assert made.status_code == 201 and made.json()["kind"] == "constraint", made.text
    wrong = await graph_http.post("/v1/memories/kinds-added/facts", headers=auth(key), json={
        "note": "x", "subject": "a", "object": "b", "kind": "rumour"})
    assert wrong.status_code in (400, 422)
    # A constraint added by hand is in front of the model from the next call on.
    agent = ScriptedAgent(graph_http, key, "kinds-added", model, GRAPH_CEILING)
    await agent.turn(2)
    assert "Invoices must be issued in EUR." in facts_block(agent.decorations[-1]["request"])
