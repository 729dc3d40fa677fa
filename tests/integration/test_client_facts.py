"""`lethe.client`'s fact calls against the real gateway: add, search, correct, list and forget a memory's facts."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from lethe.client import AsyncLethe, Facts, Lethe, LetheAPIError
from tests.support import eventually, memory_with_a_turn


async def test_a_fact_round_trips_through_the_client(
    gateway: str, http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    _, key = tenant
    await memory_with_a_turn(http, key, "client-facts")
    async with AsyncLethe(gateway, key) as lethe:
        added = await lethe.add_fact("client-facts", "Dana owns the Kestrel tax table.", "Dana", "Kestrel tax table")
        assert (added.source, added.subject) == ("api", "Dana")

        async def found(fact_id: str) -> list[str]:
            hits = await lethe.search_facts("client-facts", "Kestrel tax table", limit=5)
            return [str(h.id) for h in hits.results if h.kind == "fact" and h.id == fact_id]

        await eventually(lambda: found(added.id), timeout=60)
        corrected = await lethe.correct_fact("client-facts", added.id, "Priya owns the Kestrel tax table.",
                                             subject="Priya")
        assert (corrected.corrects, corrected.subject, corrected.object) == (added.id, "Priya", "Kestrel tax table")

        def blocking_listing() -> Facts:
            with Lethe(gateway, key) as blocking:
                return blocking.facts("client-facts")

        # The blocking client sees the same memory (off the loop the test gateway serves on).
        listing = await asyncio.to_thread(blocking_listing)
        assert {f.fact_key: f.in_force for f in listing.facts} == {added.id: False, corrected.id: True}
        assert (await lethe.state("client-facts")).facts_block is None  # nothing has faded: no facts block yet

        forgotten = await lethe.forget_fact("client-facts", corrected.id)
        assert (forgotten.done, forgotten.facts) == ("forgotten", [corrected.id])
        assert await found(corrected.id) == []

    async with AsyncLethe(gateway, other_tenant[1]) as stranger:
        with pytest.raises(LetheAPIError) as caught:
            await stranger.facts("client-facts")
    assert (caught.value.status, caught.value.type) == (404, "not_found")
