"""Recall across a user's conversations (issue #37): a short conversation A that never forgets anything goes
quiet; the first message of the same user's conversation B gets what A held, marked as another conversation's
and dated, the corrected value with its correction; another user of the tenant, and the same user id in another
tenant, get none of it.

`test_first_message_of_a_new_conversation_recalls_the_users_graph` is #37's first Done-when line, written
against `X-Lethe-User` (the binding); `..._bound_in_tables` is the same story with the binding written to the
tables, so recall's part is tested on its own."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx

from engine.blocks.dates import ELSEWHERE
from store.db import Database
from tests.integration.recall.person import Person, bind_in_tables, graph_passages
from tests.integration.workflows.lane_support import http_tenant, lane_idle
from tests.support import eventually

TOLD = [
    "My dog is called Biscuit and he is a beagle.",
    "I work as a lighthouse keeper on the island of Vardø.",
    "My favourite tea is lapsang souchong, brewed strong.",
    "Correction about my dog: his name is Pretzel, not Biscuit. I misspoke earlier.",
]
ASKED = "Can you remind me what my dog is called, and which island my lighthouse is on?"


async def _tell_a(person: Person, at: datetime) -> None:
    for n, said in enumerate(TOLD):
        assert await person.turn(said, "Got it.", at=at + timedelta(minutes=n)) is None


def _holds_the_corrected_value(block: str | None) -> bool:
    """Pretzel is shown; Biscuit, if at all, only where Pretzel stands beside it as its correction."""
    if block is None or "Pretzel" not in block or ELSEWHERE not in block:
        return False
    return "Biscuit" not in block or all("Pretzel" in record for record in block.split("\n- ") if "Biscuit" in record)


def _touches(block: str | None) -> bool:
    return block is not None and any(word in block for word in ("Pretzel", "Biscuit", "Vardø", "lighthouse"))


async def test_first_message_of_a_new_conversation_recalls_the_users_graph(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    user = f"u-{uuid.uuid4().hex[:8]}"
    quiet = datetime.now(UTC) - timedelta(hours=3)  # A went quiet long past the idle period
    await _tell_a(Person(recall_http, key, "a", user), quiet)
    await lane_idle(db, tenant_id)
    assert await eventually(lambda: graph_passages(db, tenant_id, user), timeout=60)

    block = await Person(recall_http, key, "b", user).turn(ASKED)
    assert _holds_the_corrected_value(block), block

    stranger = await Person(recall_http, key, "c", f"u-{uuid.uuid4().hex[:8]}").turn(ASKED)
    assert not _touches(stranger), stranger
    _, other_key = await http_tenant(recall_http)
    namesake = await Person(recall_http, other_key, "b", user).turn(ASKED)
    assert not _touches(namesake), namesake


async def test_a_conversation_recalls_the_users_other_conversation_bound_in_tables(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    quiet = datetime.now(UTC) - timedelta(hours=3)
    await bind_in_tables(db, tenant_id, "a", "u1")
    a = Person(recall_http, key, "a", None)
    await _tell_a(a, quiet)
    await lane_idle(db, tenant_id)
    passages = await eventually(lambda: graph_passages(db, tenant_id, "u1"), timeout=60)
    assert {m for m, _ in passages} == {"a"}
    # A's own quiet turns are in its history: the user's graph gives it nothing of its own back.
    assert await a.turn(ASKED) is None

    await bind_in_tables(db, tenant_id, "b", "u1")
    block = await Person(recall_http, key, "b", None).turn(ASKED)
    assert _holds_the_corrected_value(block), block

    await bind_in_tables(db, tenant_id, "c", "u2")
    assert not _touches(await Person(recall_http, key, "c", None).turn(ASKED))
    assert not _touches(await Person(recall_http, key, "solo", None).turn(ASKED))


async def test_a_message_that_touches_nothing_gets_no_block_from_the_users_graph(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    await bind_in_tables(db, tenant_id, "a", "u1")
    await _tell_a(Person(recall_http, key, "a", None), datetime.now(UTC) - timedelta(hours=3))
    await lane_idle(db, tenant_id)
    await eventually(lambda: graph_passages(db, tenant_id, "u1"), timeout=60)

    await bind_in_tables(db, tenant_id, "b", "u1")
    assert await Person(recall_http, key, "b", None).turn("Could you suggest a name for a new sailing club?") is None
