"""The knowledge graph through the API, on a fixture conversation the test owns: entities resolved, a
restatement merged, a changed date retiring the old one, identifiers found by their exact form."""

from __future__ import annotations

import httpx

from store.db import Database
from store.repositories import lane
from tests.integration import search_reference
from tests.integration.graph.conversation import (
    BATCHES,
    auth,
    converse,
    entities_by_alias,
    export,
    facts_block,
    settle,
)


async def test_graph_resolves_merges_retires_and_finds_identifiers(
    graph_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    agent = await converse(graph_http, key, "graph", BATCHES)
    await settle(db, tenant_id)
    doc = await export(graph_http, key, "graph")

    # "Dana", "Dana Whitfield" and "our PM Dana" are one entity; "Dana Lee" is another.
    names = entities_by_alias(doc)
    assert names["Dana"] == names["Dana Whitfield"] == names["our PM Dana"]
    assert names["Dana Lee"] != names["Dana"]

    facts = {f["note"]: f for f in doc["facts"]}
    # A restatement is one fact with two provenances: the restating row points at the fact that stands.
    owns, owned = facts["Dana owns the checkout migration."], facts["The checkout migration is owned by Dana."]
    assert owns["merged_into"] is None and owned["merged_into"] == owns["fact_key"]
    assert owned["note_call_id"] != owns["note_call_id"] and owned["merged_at"]
    # The move to Thursday retires Wednesday, dated and named; both stay in the export.
    wednesday, thursday = facts["The launch is on Wednesday."], facts["The launch moved to Thursday."]
    assert wednesday["retired_by"] == thursday["fact_key"] and wednesday["retired_at"] == thursday["at"]
    assert thursday["retired_at"] is None
    assert {f["source"] for f in doc["facts"]} >= {"user", "tool", "assistant"}

    # Only current facts in the facts block, under canonical names: Thursday, never Wednesday.
    await agent.turn(10_000)
    block = facts_block(agent.decorations[-1]["request"])
    assert "Thursday" in block and "Wednesday" not in block, block
    assert "is owned by Dana." not in block and "Dana owns the checkout migration." in block
    assert f"[{names['our PM Dana']}, tax table]" in block

    state = (await graph_http.get("/v1/memories/graph", headers=auth(key))).json()["graph"]
    assert state["retired_facts"] == 1 and state["merged_facts"] == 1
    assert state["current_facts"] == sum(len(b) for b in BATCHES) - 2
    assert state["entities"] == len(doc["entities"]) and state["passages"] == len(doc["passages"]) > 0

    # Identifiers written once are found by their exact form, and a near miss is not.
    async with db.session() as session:
        pk = await lane.memory_pk(session, tenant_id=tenant_id, memory_id="graph")
        assert pk is not None
        for identifier, expected in (("ORD-55120", "Order ORD-55120"), ("db-kestrel-9", "db-kestrel-9"),
                                     ("flag_checkout_v3", "flag_checkout_v3")):
            hits = await search_reference.search_words(session, tenant_id=tenant_id, memory_pk=pk, query=identifier)
            assert hits and expected in hits[0].text, (identifier, hits)
        assert not await search_reference.search_words(session, tenant_id=tenant_id, memory_pk=pk, query="ORD-55121")
        # Inside a question whose other words no note holds all of, the identifier alone still finds it; a prefix
        # of it is another identifier and finds nothing.
        hits = await search_reference.search_words(session, tenant_id=tenant_id, memory_pk=pk,
                                         query="Where does ORD-55120 stand, and who follows it up this week?")
        assert hits and "ORD-55120" in hits[0].text, hits
        assert not await search_reference.search_words(session, tenant_id=tenant_id, memory_pk=pk, query="ORD-551")
        # Never across tenants: another tenant's memory finds nothing of this one.
        assert not await search_reference.search_words(session, tenant_id="someone-else", memory_pk=pk,
                                                       query="ORD-55120")
