"""What a user's conversation holds reaches the user's graph by its tenant's per-source profile: under the
defaults, what the user said does and what the model only inferred does not, until the profile opts that source
in. Fed facts are integrated by the graph's own lane, each once, with the conversation they came from."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from sqlalchemy import select

from store.db import Database
from store.models import FactRow, MemoryRow
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.graph.graph_support import write_note
from tests.support import eventually

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SAID = {"note": "Fern's flight to Oslo leaves on May 3.", "subject": "Fern's flight", "object": "May 3",
        "source": "user"}
GUESSED = {"note": "Fern probably prefers aisle seats.", "subject": "Fern", "object": "aisle seats",
           "source": "assistant"}
LATER = {"note": "Fern's hotel in Oslo is the Grand.", "subject": "Fern's hotel", "object": "the Grand",
         "source": "user"}


async def _fed(db: Database, tenant_id: str) -> dict[str, tuple[str | None, bool]]:
    """The user's graph: origin fact key -> (origin conversation, integrated)."""
    async with db.session() as session:
        rows = await session.execute(
            select(FactRow.origin_fact_key, FactRow.origin_memory_id, FactRow.integrated_at)
            .join(MemoryRow, MemoryRow.id == FactRow.memory_pk)
            .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == "~user:fern"))
        return {key: (origin, at is not None) for key, origin, at in rows}


async def test_the_profile_decides_which_sources_reach_the_users_graph(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database,
) -> None:
    tenant_id, key = tenant
    decorated = await http.post("/v1/memories/feed-a/decorate", json={
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Plan my Oslo trip."}]},
        headers={"Authorization": f"Bearer {key}", "X-Lethe-User": "fern"})
    assert decorated.status_code == 200, decorated.text
    await write_note(db, tenant_id, "feed-a", "n1", [SAID, GUESSED], AT)

    async def integrated() -> dict[str, tuple[str | None, bool]] | None:
        fed = await _fed(db, tenant_id)
        return fed if fed and all(done for _, done in fed.values()) else None

    fed = await eventually(integrated, timeout=60)
    assert fed == {"n1:0": ("feed-a", True)}  # the user's word, not the model's guess

    opted = await http.put(f"/v1/admin/tenants/{tenant_id}/profile", json={"profile": {"assistant": True}},
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert opted.status_code == 200 and opted.json()["profile"]["assistant"] is True, opted.text
    await write_note(db, tenant_id, "feed-a", "n2", [LATER], AT)

    async def all_three() -> dict[str, tuple[str | None, bool]] | None:
        fed = await integrated()
        return fed if fed is not None and len(fed) == 3 else None

    fed = await eventually(all_three, timeout=60)
    assert fed == {"n1:0": ("feed-a", True), "n1:1": ("feed-a", True), "n2:0": ("feed-a", True)}


async def test_an_agent_named_by_its_calls_has_its_own_line_in_the_profile(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database,
) -> None:
    """`X-Lethe-Agent` names the conversation's agent (once: another is a 409); `agent:<name>` in the profile
    then decides for what that agent's model noted, whatever its source."""
    tenant_id, key = tenant
    opted = await http.put(f"/v1/admin/tenants/{tenant_id}/profile", json={"profile": {"agent:planner": True}},
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert opted.status_code == 200, opted.text
    headers = {"Authorization": f"Bearer {key}", "X-Lethe-User": "gus", "X-Lethe-Agent": "planner"}
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Plan my week."}]}
    assert (await http.post("/v1/memories/agent-a/decorate", json=body, headers=headers)).status_code == 200
    other = await http.post("/v1/memories/agent-a/decorate", json=body,
                            headers={**headers, "X-Lethe-Agent": "critic"})
    assert other.status_code == 409 and "planner" in other.text and "X-Lethe-Agent" in other.text
    await write_note(db, tenant_id, "agent-a", "n1", [GUESSED], AT)  # the model's guess: muted by source alone

    async def fed() -> list[tuple[str | None, str | None]]:
        async with db.session() as session:
            rows = await session.execute(
                select(FactRow.origin_fact_key, FactRow.integrated_at)
                .join(MemoryRow, MemoryRow.id == FactRow.memory_pk)
                .where(MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id == "~user:gus"))
            return [(k, str(at) if at else None) for k, at in rows if at is not None]

    assert [k for k, _ in await eventually(fed, timeout=60)] == ["n1:0"]
