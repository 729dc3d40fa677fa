"""A memory rebuilt from its export: export, erase, import and export again give the same document apart from row
ids, the times rows were stored at and change stamps; the rebuilt memory is found and recalled as before; a bad
document is refused naming the field, and nothing is written."""

from __future__ import annotations

import json
from typing import Any

import httpx

from store.db import Database
from tests.integration.facts.conftest import FACTS_CEILING
from tests.integration.hot_path.scripted import ScriptedAgent, ScriptedModel
from tests.integration.workflows.lane_support import lane_idle, scalar
from tests.support import eventually

# Stamps of the database's own: when a row was stored and its change counters (and the memory's event counter:
# the import is an event of its own).
STAMPS = {"created_at", "changed_version", "history_version", "mechanism_version", "last_event_seq", "user_pk",
          "origin_memory_pk"}


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _comparable(document: dict[str, Any]) -> dict[str, Any]:
    """The document with each row id replaced by what names the row for a person (a fact's key, an entity's
    name...), and the database's stamps left out."""
    names = {
        "facts": {r["id"]: r["fact_key"] for r in document["facts"]},
        "passages": {r["id"]: f"{r['episode_key']}#{r['ordinal']}" for r in document["passages"]},
        "entities": {r["id"]: r["name"] for r in document["entities"]},
        "note_calls": {r["id"]: r["call_id"] for r in document["note_calls"]},
    }

    def items(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**i, "id": names["facts" if i["kind"] == "fact" else "passages"].get(i["id"], i["id"]),
                 **({"since": items(i["since"])} if "since" in i else {})} for i in values]

    rename = {
        "note_call_id": "note_calls", "subject_entity_id": "entities", "object_entity_id": "entities",
        "entity_id": "entities",
    }
    out: dict[str, Any] = {"memory": {k: v for k, v in document["memory"].items() if k not in STAMPS | {"id"}}}
    for section, rows in document.items():
        if section == "memory":
            continue
        shown = []
        for row in rows:
            row = {k: v for k, v in row.items() if k not in STAMPS and not (k == "id" and section != "decorations")}
            for column, table in rename.items():
                if row.get(column) is not None:
                    row[column] = names[table][row[column]]
            for column in ("fact_ids", "distilled_fact_ids"):
                if row.get(column) is not None:
                    row[column] = [names["facts"][i] for i in row[column]]
            for column in ("passage_ids", "distilled_passage_ids"):
                if row.get(column) is not None:
                    row[column] = [names["passages"][i] for i in row[column]]
            if section == "recall_blocks" and row.get("items"):
                row["items"] = items(row["items"])
            if section == "recall_walks":
                row["levels"] = [[names["facts"][pair[0]], *pair[1:]] for pair in row["levels"]]
            shown.append(row)
        out[section] = shown
    return out


async def _export(http: httpx.AsyncClient, key: str, memory_id: str) -> dict[str, Any]:
    response = await http.get(f"/v1/memories/{memory_id}/export", headers=_auth(key))
    assert response.status_code == 200, response.text
    return json.loads(response.content)  # type: ignore[no-any-return]


async def test_export_erase_import_export_round_trips_and_the_memory_works_again(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str], other_tenant: tuple[str, str],
) -> None:
    tenant_id, key = tenant
    agent = ScriptedAgent(facts_http, key, "moved", ScriptedModel("chat_completions"), FACTS_CEILING)
    turn = await agent.until_asked()
    for more in range(1, 8):  # past the note: facts, passages, recall blocks and walks
        await agent.turn(turn + more)
    added = await facts_http.post("/v1/memories/moved/facts", headers=_auth(key), json={
        "note": "The Kestrel launch moved to 12 March.", "subject": "Kestrel launch", "object": "12 March"})
    assert added.status_code == 201, added.text
    await lane_idle(db, tenant_id)  # integrated first: entities, vectors
    forgotten = next(f for f in (await facts_http.get("/v1/memories/moved/facts", headers=_auth(key))).json()["facts"]
                     if f["retired_at"] is None)
    assert (await facts_http.delete(f"/v1/memories/moved/facts/{forgotten['fact_key']}",
                                    headers=_auth(key))).status_code == 200
    await lane_idle(db, tenant_id)
    before = await _export(facts_http, key, "moved")
    assert before["facts"] and before["passages"] and before["entities"] and before["episodes"]

    # Into an id that exists: refused, nothing written.
    taken = await facts_http.post("/v1/memories/moved/import", json=before, headers=_auth(key))
    assert taken.status_code == 409 and "moved" in taken.text
    assert (await facts_http.delete("/v1/memories/moved", headers=_auth(key))).status_code == 200

    imported = await facts_http.post("/v1/memories/moved/import", json=before, headers=_auth(key))
    assert imported.status_code == 201, imported.text
    assert imported.json()["rows"]["facts"] == len(before["facts"])
    after = await _export(facts_http, key, "moved")
    for section, rows in _comparable(before).items():
        for row, again in zip(rows, _comparable(after)[section], strict=True):
            assert again == row, (section, {k: (v, again.get(k)) for k, v in row.items() if again.get(k) != v})

    # The lane gives back the vectors an export leaves out: the memory is searched by meaning again, and the
    # forgotten fact stays out of every search.
    async def embedded() -> bool:
        return await scalar(db, "SELECT count(*) FROM facts f JOIN memories m ON m.id = f.memory_pk WHERE "
                                "m.tenant_id = :t AND f.words IS NOT NULL AND f.embedding IS NULL", t=tenant_id) == 0

    await eventually(embedded, timeout=90)
    kept = next(f for f in after["facts"] if f["retired_at"] is None and f["merged_into"] is None)
    hits = (await facts_http.get("/v1/memories/moved/facts/search", params={"q": kept["note"]},
                                 headers=_auth(key))).json()["results"]
    assert kept["fact_key"] in [h["id"] for h in hits]
    hits = (await facts_http.get("/v1/memories/moved/facts/search", params={"q": forgotten["note"]},
                                 headers=_auth(key))).json()["results"]
    assert forgotten["fact_key"] not in [h["id"] for h in hits]
    # And the conversation goes on from where it was.
    await agent.turn(turn + 8)
    state = (await facts_http.get("/v1/memories/moved", headers=_auth(key))).json()
    assert state["turns"] == before["memory"]["last_turn"] + 1

    # The document's decorate ids are this memory's again: a copy elsewhere is refused, and writes nothing.
    copied = await facts_http.post("/v1/memories/moved/import", json=before, headers=_auth(other_tenant[1]))
    assert copied.status_code == 409 and "erase it first" in copied.text, copied.text
    assert (await facts_http.get("/v1/memories/moved", headers=_auth(other_tenant[1]))).status_code == 404


async def test_a_bad_document_is_refused_naming_the_field_and_nothing_is_written(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str],
) -> None:
    tenant_id, key = tenant
    good = {"memory": {"last_turn": 0}, "messages": [], "facts": []}
    message = {"seq": 1, "turn": 1, "role": "user", "content_hash": "h", "body": {"role": "user", "content": "hi"},
               "at": "2026-06-01T09:00:00+00:00", "tokens": 3}
    cases = [
        ([], "body"),
        ({"messages": []}, "memory"),
        ({**good, "colours": []}, "colours"),
        ({**good, "memory": {"kind": "user_graph"}}, "memory.kind"),
        ({**good, "memory": {"last_turn": "two"}}, "memory.last_turn"),
        ({**good, "messages": {"seq": 1}}, "messages"),
        ({**good, "messages": [{**message, "at": "yesterday"}]}, "messages[0].at"),
        ({**good, "messages": [{**message, "at": "2026-06-01T09:00:00"}]}, "messages[0].at"),
        ({**good, "messages": [message, {**message, "seq": "2"}]}, "messages[1].seq"),
        ({**good, "messages": [{k: v for k, v in message.items() if k != "role"}]}, "messages[0].role"),
        ({**good, "messages": [{**message, "mood": "glad"}]}, "messages[0].mood"),
    ]
    for document, field in cases:
        response = await facts_http.post("/v1/memories/imported-bad/import", json=document, headers=_auth(key))
        assert response.status_code == 422 and field in response.text, (field, response.text)
    assert await scalar(db, "SELECT count(*) FROM memories WHERE tenant_id = :t", t=tenant_id) == 0
    ok = await facts_http.post("/v1/memories/imported-good/import", json={**good, "messages": [message]},
                               headers=_auth(key))
    assert ok.status_code == 201, ok.text
    assert (await _export(facts_http, key, "imported-good"))["messages"][0]["body"] == message["body"]
