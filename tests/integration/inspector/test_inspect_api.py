"""The inspector's API: the memory listing, activation over time, the fact history and the workflow link."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.integration.inspector.conftest import TEMPORAL_UI, Grown
from tests.support import eventually


def _auth(key: str, now: datetime | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {key}"}
    if now is not None:
        headers["X-Lethe-Now"] = now.isoformat()
    return headers


async def _say(http: httpx.AsyncClient, key: str, memory_id: str, now: datetime) -> None:
    response = await http.post(f"/v1/memories/{memory_id}/decorate", headers=_auth(key, now),
                               json={"model": "m", "messages": [{"role": "user", "content": f"hello {memory_id}"}]})
    assert response.status_code == 200, response.text


async def test_list_memories_pages_most_recent_first_with_counts(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    key = tenant[1]
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for i, name in enumerate(["alpha", "beta", "gamma"]):
        await _say(http, key, name, start + timedelta(hours=i))
    await _say(http, other_tenant[1], "alpha", start + timedelta(days=1))  # same name, another tenant

    first = await http.get("/v1/memories", params={"limit": 2}, headers=_auth(key))
    assert first.status_code == 200, first.text
    page = first.json()
    assert [m["memory_id"] for m in page["memories"]] == ["gamma", "beta"]
    gamma = page["memories"][0]
    assert gamma["messages"] == 1 and gamma["turns"] == 1 and gamma["facts"] == 0
    assert gamma["episodes"] == {"live": 0, "leaving": 0, "sealed": 0, "forgotten": 0}
    assert datetime.fromisoformat(gamma["last_activity_at"]) == start + timedelta(hours=2)
    assert gamma["note_ask_pending"] is False

    second = (await http.get("/v1/memories", params={"limit": 2, "cursor": page["next_cursor"]},
                             headers=_auth(key))).json()
    assert [m["memory_id"] for m in second["memories"]] == ["alpha"]
    assert second["next_cursor"] is None
    # Alpha is this tenant's: its time is its own, not the other tenant's later call to its own "alpha".
    assert datetime.fromisoformat(second["memories"][0]["last_activity_at"]) == start

    prefixed = (await http.get("/v1/memories", params={"prefix": "be"}, headers=_auth(key))).json()
    assert [m["memory_id"] for m in prefixed["memories"]] == ["beta"]
    others = (await http.get("/v1/memories", headers=_auth(other_tenant[1]))).json()
    assert [m["memory_id"] for m in others["memories"]] == ["alpha"]


@pytest.mark.parametrize(("params", "field"), [({"cursor": "not-a-cursor"}, "cursor"), ({"limit": 0}, "limit"),
                                               ({"limit": 201}, "limit")])
async def test_list_memories_rejects_bad_paging_naming_the_field(
    http: httpx.AsyncClient, tenant: tuple[str, str], params: dict[str, object], field: str
) -> None:
    response = await http.get("/v1/memories", params=params, headers=_auth(tenant[1]))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field


async def test_list_memories_needs_a_valid_key(http: httpx.AsyncClient) -> None:
    response = await http.get("/v1/memories", headers=_auth("lethe_wrong"))
    assert response.status_code == 401
    assert "memories" not in response.json()


async def test_activation_ends_where_the_memory_state_is_now(inspect_http: httpx.AsyncClient, grown: Grown) -> None:
    path = f"/v1/memories/{grown.memory_id}"
    at = datetime.now(UTC) + timedelta(minutes=5)

    async def still() -> tuple[dict[str, Any], httpx.Response] | None:
        # The lane may still be judging the memory's episodes (their salience scales their traces): both reads
        # are compared only when the state did not change between them.
        state = (await inspect_http.get(path, headers=_auth(grown.key, at))).json()
        response = await inspect_http.get(f"{path}/activation", params={"to": at.isoformat(), "points": 7},
                                          headers=_auth(grown.key, at))
        after = (await inspect_http.get(path, headers=_auth(grown.key, at))).json()
        return (state, response) if after == state else None

    state, response = await eventually(still, timeout=60)
    # A memory that has faded: episodes in several states (which ones depends on how far the lane has cut the
    # live tail when this runs), so the series below cross state changes.
    assert len({e["state"] for e in state["episodes"]}) >= 2, state["episodes"]
    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["times"]) == 7 and datetime.fromisoformat(body["to"]) == at
    assert body["episodes_total"] == len(state["episodes"]) and not body["truncated"]
    now_by_id = {e["id"]: e for e in state["episodes"]}
    assert [e["id"] for e in body["episodes"]] == list(now_by_id)
    for series in body["episodes"]:
        expected = now_by_id[series["id"]]
        assert series["activation"][-1] == pytest.approx(expected["activation"], abs=1e-6)
        assert series["significance"] == pytest.approx(expected["significance"], abs=1e-6)
        assert series["state"] == expected["state"]
        # Before its messages an episode has no activation; after, it has one.
        born = datetime.fromisoformat(series["at"])
        for moment, value in zip(body["times"], series["activation"], strict=True):
            assert (value is None) == (datetime.fromisoformat(moment) < born)
    fades = [m for m in body["markers"] if m["reason"] == "fade"]
    assert fades and all(m["turn"] >= 1 and m["episodes"] >= 1 for m in fades)
    sleeps = [m for m in body["markers"] if m["reason"] == "sleep"]
    assert len(sleeps) == 1 and sleeps[0]["turn"] > fades[0]["turn"]


async def test_activation_windows_episodes_by_turn(inspect_http: httpx.AsyncClient, grown: Grown) -> None:
    path = f"/v1/memories/{grown.memory_id}/activation"
    everything = (await inspect_http.get(path, headers=_auth(grown.key))).json()["episodes"]
    last = everything[-1]
    window = (await inspect_http.get(path, params={"first_turn": last["first_turn"], "last_turn": last["last_turn"]},
                                     headers=_auth(grown.key))).json()
    assert last["id"] in [e["id"] for e in window["episodes"]]
    assert all(e["last_turn"] >= last["first_turn"] for e in window["episodes"])
    limited = (await inspect_http.get(path, params={"limit": 1}, headers=_auth(grown.key))).json()
    assert len(limited["episodes"]) == 1 and limited["truncated"] is (len(everything) > 1)


@pytest.mark.parametrize(("params", "field"), [({"from": "yesterday"}, "from"), ({"points": 1}, "points"),
                                               ({"from": "2030-01-01T00:00:00Z", "to": "2029-01-01T00:00:00Z"},
                                                "from")])
async def test_activation_rejects_bad_input_naming_the_field(
    inspect_http: httpx.AsyncClient, grown: Grown, params: dict[str, object], field: str
) -> None:
    response = await inspect_http.get(f"/v1/memories/{grown.memory_id}/activation", params=params,
                                      headers=_auth(grown.key))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field


async def test_facts_hold_every_fact_with_its_validity(inspect_http: httpx.AsyncClient, grown: Grown) -> None:
    body = (await inspect_http.get(f"/v1/memories/{grown.memory_id}/facts", headers=_auth(grown.key))).json()
    state = (await inspect_http.get(f"/v1/memories/{grown.memory_id}", headers=_auth(grown.key))).json()
    in_force = [f for f in body["facts"] if f["retired_at"] is None and f["merged_into"] is None]
    assert body["facts"] and len(in_force) == state["facts"]
    fact = body["facts"][0]
    assert {"note", "subject", "object", "episode_keys", "valid_from", "retired_at"} <= set(fact)
    assert "tenant_id" not in fact and "memory_pk" not in fact
    # The facts block the model sees holds the facts of the sealed episodes.
    sealed = {e["id"] for e in state["episodes"] if e["state"] == "sealed"}
    for f in body["facts"]:
        if sealed & set(f["episode_keys"]) and f["note"]:
            assert f["note"] in state["facts_block"]


async def test_workflow_link_opens_the_memory_in_the_temporal_ui(inspect_http: httpx.AsyncClient, grown: Grown) -> None:
    body = (await inspect_http.get(f"/v1/memories/{grown.memory_id}/workflow", headers=_auth(grown.key))).json()
    assert body["workflow_id"] == f"memory/{grown.tenant_id}/{grown.memory_id}"
    assert body["temporal_ui_url"] == (f"{TEMPORAL_UI}/namespaces/default/workflows/"
                                       f"{quote(body['workflow_id'], safe='')}")


@pytest.mark.parametrize("suffix", ["/activation", "/facts", "/workflow"])
async def test_another_tenants_memory_is_a_404(inspect_http: httpx.AsyncClient, grown: Grown, suffix: str) -> None:
    response = await inspect_http.get(f"/v1/memories/{grown.memory_id}{suffix}", headers=_auth(grown.other_key))
    assert response.status_code == 404, response.text
    missing = await inspect_http.get(f"/v1/memories/no-such-memory{suffix}", headers=_auth(grown.key))
    assert missing.status_code == 404
    assert response.json()["error"]["type"] == missing.json()["error"]["type"]


async def test_the_page_and_its_files_ship_with_the_gateway(http: httpx.AsyncClient) -> None:
    page = await http.get("/inspect")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    for src in ("/inspect/static/app.js", "/inspect/static/inspect.css"):
        assert src in page.text
        asset = await http.get(src)
        assert asset.status_code == 200 and asset.headers["content-security-policy"] == policy
    assert "http" not in page.text.replace("http-equiv", "").replace("http://www.w3.org", "")


async def test_the_inspector_calls_are_in_the_openapi_document(http: httpx.AsyncClient) -> None:
    paths = (await http.get("/openapi.json")).json()["paths"]
    for path in ("/v1/memories", "/v1/memories/{memory_id}/activation", "/v1/memories/{memory_id}/facts",
                 "/v1/memories/{memory_id}/workflow"):
        assert "get" in paths[path], path
    assert {p["name"] for p in paths["/v1/memories/{memory_id}/activation"]["get"]["parameters"]} >= {
        "from", "to", "points", "first_turn", "last_turn", "limit"}
