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


async def test_a_users_memory_through_the_client(gateway: str, tenant: tuple[str, str]) -> None:
    """`user=` turns each fact call to the user's graph; the user calls list, read and erase them; a memory's
    export imports back under another id."""
    _, key = tenant
    async with AsyncLethe(gateway, key) as lethe:
        await lethe.decorate("client-user-chat", {"model": "gpt-4o-mini", "messages": [
            {"role": "user", "content": "Hi, I am Noor."}]}, user="noor")
        added = await lethe.add_fact(None, "Noor's favourite tea is genmaicha.", "Noor", "genmaicha", user="noor")
        assert added.user_id == "noor" and added.memory_id is None and added.source == "api"

        async def found() -> list[str]:
            hits = await lethe.search_facts(None, "genmaicha tea", user="noor")
            return [str(h.id) for h in hits.results if h.kind == "fact"]

        assert added.id in await eventually(found, timeout=60)
        listing = await lethe.facts(user="noor")
        assert listing.user_id == "noor" and [f.fact_key for f in listing.facts] == [added.id]
        assert [u["user_id"] for u in (await lethe.users())["users"]] == ["noor"]
        assert [m["memory_id"] for m in (await lethe.user("noor"))["memories"]] == ["client-user-chat"]
        forgotten = await lethe.forget_fact(None, added.id, user="noor", erase=True)
        assert forgotten.done == "erased" and forgotten.user_id == "noor"
        with pytest.raises(ValueError):
            await lethe.facts("client-user-chat", user="noor")

        document = await lethe.export("client-user-chat")
        assert (await lethe.erase("client-user-chat")).erased
        assert (await lethe.import_memory("client-user-chat", document))["imported"] is True
        # Imported, it belongs to no one: erasing the user leaves it.
        erased = await lethe.erase_user("noor", memories=True)
        assert erased["erased"] is True and erased["memories"] == []
        assert (await lethe.state("client-user-chat")).turns == 1
        with pytest.raises(LetheAPIError) as gone:
            await lethe.user("noor")
        assert gone.value.status == 404
