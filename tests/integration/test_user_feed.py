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
