"""A user's memory managed through the API, on the real stack: list and read users, their graph's facts (search,
add, correct, forget, erase), the tenant's per-source profile, and erasing a user with or without their
conversations."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import text

from store.db import Database
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.graph.graph_support import write_note
from tests.integration.workflows.lane_support import scalar
from tests.support import eventually

AT = datetime(2026, 6, 2, 9, 0, tzinfo=UTC)
FLIGHT = {"note": "Ines flies to Lisbon on June 14.", "subject": "Ines's flight", "object": "June 14",
          "source": "user"}
DIET = {"note": "Ines is vegetarian.", "subject": "Ines", "object": "vegetarian", "source": "user"}


def _auth(key: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **extra}


ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def _user_with_facts(http: httpx.AsyncClient, db: Database, tenant: tuple[str, str], user: str,
                           memory_id: str) -> dict[str, dict[str, Any]]:
    """A conversation of `user` whose two facts reached the user's graph and were integrated there; returns the
    graph's facts by their origin fact key."""
    tenant_id, key = tenant
    decorated = await http.post(f"/v1/memories/{memory_id}/decorate", headers=_auth(key, **{"X-Lethe-User": user}),
                                json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello."}]})
    assert decorated.status_code == 200, decorated.text
    await write_note(db, tenant_id, memory_id, "n1", [FLIGHT, DIET], AT)

    async def fed() -> dict[str, dict[str, Any]] | None:
        listing = await _facts(http, key, user)
        return listing if len(listing) == 2 and all(f["integrated_at"] for f in listing.values()) else None

    return await eventually(fed, timeout=90)


async def _facts(http: httpx.AsyncClient, key: str, user: str) -> dict[str, dict[str, Any]]:
    response = await http.get(f"/v1/users/{user}/facts", headers=_auth(key))
    assert response.status_code == 200, response.text
    return {f["origin_fact_id"] or f["fact_key"]: f for f in response.json()["facts"]}


async def _fact_rows(db: Database, tenant_id: str) -> list[tuple[Any, ...]]:
    async with db.session() as session:
        rows = await session.execute(text(
            "SELECT memory_pk, fact_key, note, retired_at, retired_by FROM facts WHERE tenant_id = :t "
            "ORDER BY id"), {"t": tenant_id})
        return [tuple(row) for row in rows]


async def test_users_are_listed_read_and_searched_per_tenant(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str], other_tenant: tuple[str, str],
) -> None:
    _, key = tenant
    facts = await _user_with_facts(facts_http, db, tenant, "ines", "ines-trip")
    assert {f["origin_memory_id"] for f in facts.values()} == {"ines-trip"}
    assert facts["n1:0"]["note"] == FLIGHT["note"] and facts["n1:0"]["source"] == "user"

    listed = (await facts_http.get("/v1/users", headers=_auth(key))).json()
    assert [(u["user_id"], u["memories"], u["facts"]) for u in listed["users"]] == [("ines", 1, 2)]
    assert listed["next_cursor"] is None
    user = (await facts_http.get("/v1/users/ines", headers=_auth(key))).json()
    assert [m["memory_id"] for m in user["memories"]] == ["ines-trip"] and user["facts_in_force"] == 2
    assert user["profile"]["user"] is True and user["profile"]["assistant"] is False

    found = await facts_http.get("/v1/users/ines/facts/search", params={"q": "When does Ines fly to Lisbon?"},
                                 headers=_auth(key))
    assert found.status_code == 200, found.text
    hits = found.json()
    assert hits["user_id"] == "ines" and "memory_id" not in hits
    assert hits["results"][0]["note"] == FLIGHT["note"] and hits["results"][0]["origin_memory_id"] == "ines-trip"

    # Another tenant has no such user, whatever it asks.
    other = other_tenant[1]
    assert (await facts_http.get("/v1/users", headers=_auth(other))).json()["users"] == []
    for path in ("/v1/users/ines", "/v1/users/ines/facts", "/v1/users/ines/facts/search?q=Lisbon"):
        response = await facts_http.get(path, headers=_auth(other))
        assert response.status_code == 404, (path, response.text)
        assert "ines" in response.text
    # Bad input names the field.
    for path, field in (("/v1/users?limit=0", "limit"), ("/v1/users?cursor=nope", "cursor"),
                        ("/v1/users/ines/facts/search?q=%20", "q"), ("/v1/users/~user:ines", "user_id")):
        response = await facts_http.get(path, headers=_auth(key))
        assert response.status_code in (404, 422), (path, response.text)
        if response.status_code == 422:
            assert field in response.text, (path, response.text)


async def test_a_users_facts_are_added_corrected_and_forgotten_in_the_conversation_too(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str], other_tenant: tuple[str, str],
) -> None:
    tenant_id, key = tenant
    facts = await _user_with_facts(facts_http, db, tenant, "jon", "jon-trip")
    flight, diet = facts["n1:0"]["fact_key"], facts["n1:1"]["fact_key"]

    # Bad inputs: a 4xx naming the field (or the fact), and nothing changed.
    before = await _fact_rows(db, tenant_id)
    bad = [
        ("POST", "/v1/users/jon/facts", {"note": "x", "subject": "a"}, 422, "object"),
        ("POST", "/v1/users/jon/facts", {"note": 5, "subject": "a", "object": "b"}, 422, "note"),
        ("POST", "/v1/users/jon/facts", {"note": "x", "subject": "a", "object": "b", "colour": 1}, 422, "colour"),
        ("POST", "/v1/users/jon/facts", ["not", "an", "object"], 422, "body"),
        ("POST", f"/v1/users/jon/facts/{flight}/correct", {"note": ""}, 422, "note"),
        ("POST", "/v1/users/jon/facts/api_nope/correct", {"note": "Jon flies on June 15."}, 404, "api_nope"),
        ("DELETE", "/v1/users/jon/facts/api_nope", None, 404, "api_nope"),
        ("POST", "/v1/users/nobody/facts", {"note": "x", "subject": "a", "object": "b"}, 404, "nobody"),
    ]
    for method, path, body, status, named in bad:
        response = await facts_http.request(method, path, json=body, headers=_auth(key))
        assert response.status_code == status and named in response.text, (path, response.text)
    # Another tenant's fact: not found there (the user id is only this tenant's).
    response = await facts_http.delete(f"/v1/users/jon/facts/{flight}", headers=_auth(other_tenant[1]))
    assert response.status_code == 404, response.text
    assert await _fact_rows(db, tenant_id) == before

    added = await facts_http.post("/v1/users/jon/facts", headers=_auth(key), json={
        "note": "Jon's seat preference is the window.", "subject": "Jon", "object": "window seat"})
    assert added.status_code == 201, added.text
    assert added.json()["user_id"] == "jon" and added.json()["source"] == "api"

    corrected = await facts_http.post(f"/v1/users/jon/facts/{flight}/correct", headers=_auth(key),
                                      json={"note": "Ines flies to Lisbon on June 15.", "object": "June 15"})
    assert corrected.status_code == 201, corrected.text
    new = corrected.json()["id"]
    assert corrected.json()["corrects"] == flight
    listing = {f["fact_key"]: f for f in (await _facts(facts_http, key, "jon")).values()}
    assert listing[flight]["retired_by"] == new and listing[new]["retired_at"] is None
    again = await facts_http.post(f"/v1/users/jon/facts/{flight}/correct", headers=_auth(key),
                                  json={"note": "Ines flies on June 16."})
    assert again.status_code == 409 and new in again.text

    # Forgetting a fed fact forgets it in the conversation it came from: neither recalls it, nor is it fed again.
    forgotten = await facts_http.delete(f"/v1/users/jon/facts/{diet}", headers=_auth(key))
    assert forgotten.status_code == 200, forgotten.text
    assert forgotten.json() == {"user_id": "jon", "id": diet, "done": "forgotten", "facts": [diet]}
    conversation = {f["fact_key"]: f for f in (await facts_http.get(
        "/v1/memories/jon-trip/facts", headers=_auth(key))).json()["facts"]}
    assert conversation["n1:1"]["retired_by"] == "forgotten"
    hits = (await facts_http.get("/v1/users/jon/facts/search", params={"q": "Is Jon vegetarian?"},
                                 headers=_auth(key))).json()["results"]
    assert DIET["note"] not in [h.get("note") for h in hits]

    # Erasing outright deletes both rows; the conversation's next note does not bring it back.
    erased = await facts_http.delete(f"/v1/users/jon/facts/{new}", params={"erase": "true"}, headers=_auth(key))
    assert erased.status_code == 200 and erased.json()["done"] == "erased", erased.text
    flight_rows = await scalar(db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND note = :n", t=tenant_id,
                               n="Ines flies to Lisbon on June 15.")
    assert flight_rows == 0
    await write_note(db, tenant_id, "jon-trip", "n2", [{**FLIGHT, "note": "Jon's hotel is the Avenida.",
                                                        "subject": "Jon's hotel", "object": "the Avenida"}], AT)

    async def hotel_fed() -> dict[str, dict[str, Any]] | None:
        now = await _facts(facts_http, key, "jon")
        return now if "n2:0" in now else None

    now = await eventually(hotel_fed, timeout=90)
    assert now["n1:1"]["retired_by"] == "forgotten"  # still forgotten, not fed a second time
    assert sum(1 for f in now.values() if f["note"] == DIET["note"]) == 1


async def test_the_tenants_profile_is_read_and_set_through_the_admin_api(
    facts_http: httpx.AsyncClient, tenant: tuple[str, str],
) -> None:
    tenant_id, _ = tenant
    path = f"/v1/admin/tenants/{tenant_id}/profile"
    shown = await facts_http.get(path, headers=ADMIN)
    assert shown.status_code == 200, shown.text
    assert shown.json() == {"tenant_id": tenant_id, "profile": {
        "user": True, "api": True, "assistant": False, "tool": False, "unknown": False, "extracted": False}}

    for body, field in (({"profile": {"asistant": True}}, "profile.asistant"),
                        ({"profile": {"assistant": "yes"}}, "profile.assistant"),
                        ({"profile": []}, "profile"), ({}, "profile"),
                        ({"profile": {}, "other": 1}, "other")):
        response = await facts_http.put(path, headers=ADMIN, json=body)
        assert response.status_code == 422 and field in response.text, (body, response.text)
    assert (await facts_http.get(path, headers=ADMIN)).json() == shown.json()  # nothing changed

    set_ = await facts_http.put(path, headers=ADMIN, json={"profile": {"assistant": True, "agent:triage": False}})
    assert set_.status_code == 200, set_.text
    assert set_.json()["profile"]["assistant"] is True and set_.json()["profile"]["agent:triage"] is False
    cleared = await facts_http.put(path, headers=ADMIN, json={"profile": {"assistant": None}})
    assert cleared.json()["profile"]["assistant"] is False and "agent:triage" in cleared.json()["profile"]

    assert (await facts_http.get(path)).status_code == 401
    assert (await facts_http.get(f"/v1/admin/tenants/t_{uuid.uuid4().hex[:16]}/profile",
                                 headers=ADMIN)).status_code == 404


async def _rows_naming(db: Database, needles: list[str], memory_pks: list[int], user_pks: list[int]
                       ) -> dict[str, int]:
    """Every table of the schema, read whole: how many rows mention any of `needles` in any column, or point at
    one of the memories or users by key."""
    found: dict[str, int] = {}
    async with db.session() as session:
        tables = (await session.execute(text(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type = 'BASE TABLE' AND table_name <> 'alembic_version'"))).scalars().all()
        for table in tables:
            columns = (await session.execute(text(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = :t"), {"t": table})).scalars().all()
            clauses = [f"CAST(x AS text) LIKE '%{needle}%'" for needle in needles]
            clauses += [f"x.{c} = ANY(:memories)" for c in columns
                        if c in ("memory_pk", "origin_memory_pk", "graph_memory_pk")]
            clauses += [f"x.{c} = ANY(:users)" for c in columns if c == "user_pk"]
            if table == "memories":
                clauses.append("x.id = ANY(:memories)")
            if table == "users":
                clauses.append("x.id = ANY(:users)")
            count = (await session.execute(text(f'SELECT count(*) FROM "{table}" AS x WHERE {" OR ".join(clauses)}'),
                                           {"memories": memory_pks, "users": user_pks})).scalar_one()
            if count:
                found[table] = count
    return found


async def test_erasing_a_user_with_their_memories_leaves_no_row_of_theirs_in_any_table(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str],
) -> None:
    tenant_id, key = tenant
    user = "erase-" + uuid.uuid4().hex[:10]
    await _user_with_facts(facts_http, db, tenant, user, f"{user}-one")
    second = await facts_http.post(f"/v1/memories/{user}-two/decorate", headers=_auth(key, **{"X-Lethe-User": user}),
                                   json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi."}]})
    assert second.status_code == 200, second.text
    kept = await facts_http.post("/v1/memories/kept-other/decorate", headers=_auth(key),
                                 json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi."}]})
    assert kept.status_code == 200
    async with db.session() as session:
        memory_pks = list((await session.execute(text(
            "SELECT id FROM memories WHERE tenant_id = :t AND memory_id LIKE :m"),
            {"t": tenant_id, "m": f"%{user}%"})).scalars())
        user_pks = list((await session.execute(text("SELECT id FROM users WHERE tenant_id = :t AND user_id = :u"),
                                               {"t": tenant_id, "u": user})).scalars())
    assert len(memory_pks) == 3 and len(user_pks) == 1  # two conversations and the graph; the user
    before = await _rows_naming(db, [user], memory_pks, user_pks)
    assert {"users", "memories", "facts", "messages", "entities"} <= set(before)  # the check sees them

    erased = await facts_http.delete(f"/v1/users/{user}", params={"memories": "true"}, headers=_auth(key))
    assert erased.status_code == 200, erased.text
    assert erased.json() == {"user_id": user, "erased": True, "memories": [f"{user}-two", f"{user}-one"],
                             "workflows_ended": True}
    assert await _rows_naming(db, [user], memory_pks, user_pks) == {}
    assert (await facts_http.get(f"/v1/users/{user}", headers=_auth(key))).status_code == 404
    assert (await facts_http.get(f"/v1/memories/{user}-one", headers=_auth(key))).status_code == 404
    assert (await facts_http.get("/v1/memories/kept-other", headers=_auth(key))).status_code == 200
    assert (await facts_http.delete(f"/v1/users/{user}", headers=_auth(key))).status_code == 404


async def test_erasing_a_user_alone_keeps_their_conversations_without_a_user(
    facts_http: httpx.AsyncClient, db: Database, tenant: tuple[str, str],
) -> None:
    _, key = tenant
    await _user_with_facts(facts_http, db, tenant, "kai", "kai-trip")
    erased = await facts_http.delete("/v1/users/kai", headers=_auth(key))
    assert erased.status_code == 200 and erased.json()["memories"] == [], erased.text
    assert (await facts_http.get("/v1/users/kai/facts", headers=_auth(key))).status_code == 404
    conversation = (await facts_http.get("/v1/memories/kai-trip/facts", headers=_auth(key))).json()["facts"]
    assert len(conversation) == 2
    # The conversation is free again: the next call naming a user binds it afresh.
    rebound = await facts_http.post("/v1/memories/kai-trip/decorate", headers=_auth(key, **{"X-Lethe-User": "kai2"}),
                                    json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi."}]})
    assert rebound.status_code == 200, rebound.text
