"""A memory's facts managed through the API: search, add, correct, forget and erase, on the real stack."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from store.db import Database
from tests.integration.facts.conftest import FACTS_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.recall.talk import recall_blocks
from tests.integration.workflows.lane_support import scalar
from tests.support import eventually, memory_with_a_turn


def _auth(key: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **extra}


async def _settled(db: Database, tenant_id: str) -> None:
    """Every fact of the tenant is in the graph (the lane integrated it: entities, word index, vector)."""
    async def integrated() -> bool:
        return await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND integrated_at IS NULL",
                            t=tenant_id) == 0
    await eventually(integrated, timeout=120)


async def _listing(http: httpx.AsyncClient, key: str, memory_id: str) -> dict[str, dict[str, Any]]:
    response = await http.get(f"/v1/memories/{memory_id}/facts", headers=_auth(key))
    assert response.status_code == 200, response.text
    return {f["fact_key"]: f for f in response.json()["facts"]}


async def _search(http: httpx.AsyncClient, key: str, memory_id: str, q: str) -> list[dict[str, Any]]:
    response = await http.get(f"/v1/memories/{memory_id}/facts/search", params={"q": q}, headers=_auth(key))
    assert response.status_code == 200, response.text
    return [r for r in response.json()["results"] if r["kind"] == "fact"]


async def _add(http: httpx.AsyncClient, key: str, memory_id: str, **fact: Any) -> str:
    response = await http.post(f"/v1/memories/{memory_id}/facts", headers=_auth(key), json=fact)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def test_an_added_fact_joins_the_graph_and_search_finds_it_once_per_idempotency_key(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    await memory_with_a_turn(facts_http, key, "added")
    fact = {"note": "The launch of Kestrel is planned for 12 March.", "subject": "Kestrel launch",
            "object": "12 March"}
    first = await facts_http.post("/v1/memories/added/facts", json=fact,
                                  headers=_auth(key, **{"Idempotency-Key": "add-1"}))
    again = await facts_http.post("/v1/memories/added/facts", json=fact,
                                  headers=_auth(key, **{"Idempotency-Key": "add-1"}))
    assert first.status_code == again.status_code == 201, (first.text, again.text)
    assert first.json() == again.json() and first.json()["source"] == "api"
    assert list(await _listing(facts_http, key, "added")) == [first.json()["id"]]
    reused = await facts_http.post("/v1/memories/added/facts", json={**fact, "note": "Another fact."},
                                   headers=_auth(key, **{"Idempotency-Key": "add-1"}))
    assert reused.status_code == 409, reused.text
    other = await _add(facts_http, key, "added", note="Dana owns the tax table.", subject="Dana",
                       object="tax table")

    await _settled(db, tenant_id)
    hits = await _search(facts_http, key, "added", "When is the Kestrel launch?")
    assert hits[0]["id"] == first.json()["id"] and hits[0]["source"] == "api", hits
    assert hits[0]["subject"] == "Kestrel launch" and hits[0]["score"] > 0
    assert (await _search(facts_http, key, "added", "who owns the tax table"))[0]["id"] == other
    # The lane made its entities, as it does for a note's facts.
    exported = json.loads((await facts_http.get("/v1/memories/added/export", headers=_auth(key))).content)
    assert {"Kestrel launch", "12 March", "Dana", "tax table"} <= {e["name"] for e in exported["entities"]}


async def test_a_correction_retires_the_old_fact_at_once_and_search_shows_only_the_new(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    await memory_with_a_turn(facts_http, key, "corrected")
    old = await _add(facts_http, key, "corrected", note="The Kestrel launch is on Wednesday.",
                     subject="Kestrel launch", object="Wednesday")
    response = await facts_http.post(f"/v1/memories/corrected/facts/{old}/correct", headers=_auth(key),
                                     json={"note": "The Kestrel launch is on Thursday.", "object": "Thursday"})
    assert response.status_code == 201, response.text
    new = response.json()
    assert new["corrects"] == old and new["subject"] == "Kestrel launch" and new["source"] == "api"

    listing = await _listing(facts_http, key, "corrected")
    assert listing[old]["retired_by"] == new["id"] and listing[old]["retired_at"] == listing[new["id"]]["at"]
    assert listing[new["id"]]["retired_at"] is None
    await _settled(db, tenant_id)
    assert [h["id"] for h in await _search(facts_http, key, "corrected", "When is the Kestrel launch?")] == [new["id"]]

    # The old one is no longer in force: correcting it again is refused, and nothing changes.
    before = await _listing(facts_http, key, "corrected")
    again = await facts_http.post(f"/v1/memories/corrected/facts/{old}/correct", headers=_auth(key),
                                  json={"note": "The Kestrel launch is on Friday."})
    assert again.status_code == 409 and new["id"] in again.json()["error"]["message"], again.text
    assert await _listing(facts_http, key, "corrected") == before


async def test_a_forgotten_fact_leaves_the_facts_block_and_search_and_stays_in_the_export_as_forgotten(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    model = ScriptedModel("chat_completions", note_only_every=1000)
    agent = ScriptedAgent(facts_http, key, "forgetting", model, FACTS_CEILING)
    turn = await agent.until_asked()
    await agent.turn(turn + 1)
    ticket = f"LTH-{1000 + model.asks_seen[0][0]}"

    def block() -> str:
        request = agent.decorations[-1]["request"]
        return "\n".join(str(m.get("content")) for m in request["messages"]
                         if str(m.get("content")).startswith("Facts kept from"))

    assert ticket in block()
    fact = next(f for f in (await _listing(facts_http, key, "forgetting")).values() if ticket in f["note"])
    await _settled(db, tenant_id)
    assert fact["fact_key"] in [h["id"] for h in await _search(facts_http, key, "forgetting", ticket)]

    forgotten = await facts_http.delete(f"/v1/memories/forgetting/facts/{fact['fact_key']}", headers=_auth(key))
    assert forgotten.status_code == 200, forgotten.text
    assert forgotten.json()["done"] == "forgotten" and fact["fact_key"] in forgotten.json()["facts"]

    await agent.turn(turn + 2)
    assert ticket not in block()
    assert fact["fact_key"] not in [h["id"] for h in await _search(facts_http, key, "forgetting", ticket)]
    exported = json.loads((await facts_http.get("/v1/memories/forgetting/export", headers=_auth(key))).content)
    kept = next(f for f in exported["facts"] if f["fact_key"] == fact["fact_key"])
    assert kept["retired_by"] == "forgotten" and kept["retired_at"] and kept["note"] == fact["note"]


async def test_erase_leaves_no_row_of_the_fact(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    await memory_with_a_turn(facts_http, key, "erasing")
    gone = await _add(facts_http, key, "erasing", note="Dana's phone number is 555-0199.", subject="Dana",
                      object="555-0199")
    kept = await _add(facts_http, key, "erasing", note="Dana owns the tax table.", subject="Dana",
                      object="tax table")
    await _settled(db, tenant_id)
    response = await facts_http.delete(f"/v1/memories/erasing/facts/{gone}", params={"erase": "true"},
                                       headers=_auth(key))
    assert response.status_code == 200 and response.json()["done"] == "erased", response.text

    assert await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND (fact_key = :k OR note LIKE "
                            "'%555-0199%')", t=tenant_id, k=gone) == 0
    assert await scalar(db, "SELECT count(*) FROM traces WHERE tenant_id = :t AND fact_key = :k",
                        t=tenant_id, k=gone) == 0
    assert list(await _listing(facts_http, key, "erasing")) == [kept]
    assert gone not in [h["id"] for h in await _search(facts_http, key, "erasing", "Dana's phone number 555-0199")]
    again = await facts_http.delete(f"/v1/memories/erasing/facts/{gone}", headers=_auth(key))
    assert again.status_code == 404, again.text


@pytest.mark.parametrize(("body", "field"), [
    ({"note": "", "subject": "a", "object": "b"}, "note"),
    ({"note": "   ", "subject": "a", "object": "b"}, "note"),
    ({"note": "x" * 4001, "subject": "a", "object": "b"}, "note"),
    ({"note": 7, "subject": "a", "object": "b"}, "note"),
    ({"subject": "a", "object": "b"}, "note"),
    ({"note": "A fact.", "object": "b"}, "subject"),
    ({"note": "A fact.", "subject": ["a"], "object": "b"}, "subject"),
    ({"note": "A fact.", "subject": "a", "object": ""}, "object"),
    ({"note": "A fact.", "subject": "a", "object": "b", "milestone": "yes"}, "milestone"),
    ({"note": "A fact.", "subject": "a", "object": "b", "source": "user"}, "source"),
    (["A fact."], "body"),
])
async def test_bad_input_is_refused_naming_the_field_and_changes_nothing(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], body: Any, field: str
) -> None:
    _, key = tenant
    await memory_with_a_turn(facts_http, key, "strict")
    old = await _add(facts_http, key, "strict", note="The launch is on Wednesday.", subject="launch",
                     object="Wednesday")
    before = await _listing(facts_http, key, "strict")

    added = await facts_http.post("/v1/memories/strict/facts", json=body, headers=_auth(key))
    assert added.status_code == 422 and added.json()["error"]["field"] == field, added.text
    if field not in ("subject", "object") or body.get(field) is not None:  # a correction may leave them out
        corrected = await facts_http.post(f"/v1/memories/strict/facts/{old}/correct", json=body, headers=_auth(key))
        assert corrected.status_code == 422 and corrected.json()["error"]["field"] == field, corrected.text
    for path in ("/v1/memories/strict/facts/api_nosuchfact/correct",):
        missing = await facts_http.post(path, json={"note": "A fact."}, headers=_auth(key))
        assert missing.status_code == 404, missing.text
    missing = await facts_http.delete("/v1/memories/strict/facts/api_nosuchfact", headers=_auth(key))
    assert missing.status_code == 404, missing.text
    searched = await facts_http.get("/v1/memories/strict/facts/search", params={"q": ""}, headers=_auth(key))
    assert searched.status_code == 422 and searched.json()["error"]["field"] == "q", searched.text
    assert await _listing(facts_http, key, "strict") == before


async def test_another_tenant_gets_404_for_the_memorys_facts_and_changes_nothing(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    _, key = tenant
    _, other = other_tenant
    await memory_with_a_turn(facts_http, key, "mine")
    fact = await _add(facts_http, key, "mine", note="The launch is on Wednesday.", subject="launch",
                      object="Wednesday")
    before = await _listing(facts_http, key, "mine")
    calls = [
        facts_http.get("/v1/memories/mine/facts/search", params={"q": "launch"}, headers=_auth(other)),
        facts_http.post("/v1/memories/mine/facts", json={"note": "X.", "subject": "a", "object": "b"},
                        headers=_auth(other)),
        facts_http.post(f"/v1/memories/mine/facts/{fact}/correct", json={"note": "X."}, headers=_auth(other)),
        facts_http.delete(f"/v1/memories/mine/facts/{fact}", headers=_auth(other)),
        facts_http.delete(f"/v1/memories/mine/facts/{fact}", params={"erase": "true"}, headers=_auth(other)),
    ]
    for call in calls:
        response = await call
        assert response.status_code == 404, response.text
    assert await _listing(facts_http, key, "mine") == before


async def test_with_recall_off_search_still_finds_a_fact_by_its_words(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    await memory_with_a_turn(http, key, "words")
    fact = await _add(http, key, "words", note="Order ORD-55120 ships from the Leeds depot.", subject="ORD-55120",
                      object="Leeds depot")
    await _add(http, key, "words", note="Dana owns the tax table.", subject="Dana", object="tax table")
    await _settled(db, tenant_id)
    assert [h["id"] for h in await _search(http, key, "words", "where does ORD-55120 ship from?")] == [fact]


async def test_a_forgotten_fact_is_never_recalled_again(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    note = "The vault door code is QX-7731."
    await memory_with_a_turn(facts_http, key, "recalled")
    fact = await _add(facts_http, key, "recalled", note=note, subject="vault door", object="QX-7731")
    await _settled(db, tenant_id)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "We plan the launch together."}, {"role": "assistant", "content": "Gladly."}]

    async def ask(question: str) -> str:
        history.append({"role": "user", "content": question})
        decorated = await facts_http.post("/v1/memories/recalled/decorate", headers=_auth(key), json={
            "model": "gpt-4o-mini", "messages": history})
        assert decorated.status_code == 200, decorated.text
        body = decorated.json()
        reported = await facts_http.post("/v1/memories/recalled/report", headers=_auth(key), json={
            "decorate_id": body["decorate_id"], "response": {
                "id": "r", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [{
                    "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Noted."}}]}})
        assert reported.status_code == 200, reported.text
        history.append({"role": "assistant", "content": "Noted."})
        # Every recall block in view: this turn's, and an earlier turn's where it was placed.
        return "\n".join(text for _, text in recall_blocks(body["request"]))

    assert note in await ask("What is the vault door code QX-7731 for?")
    forgotten = await facts_http.delete(f"/v1/memories/recalled/facts/{fact}", headers=_auth(key))
    assert forgotten.status_code == 200, forgotten.text
    assert "QX-7731." not in await ask("Tell me the vault door code QX-7731 again.")
