"""Migration 0029: messages stored before one plain text block and its text were one message are recognised
after the upgrade by the hash decorate now computes; any other stored hash stays as it was."""

from __future__ import annotations

import json

from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from engine.recognition import agent_hash, content_hash
from store.migrate import _alembic_config, upgrade_to_head
from tests.support import fresh_database

BLOCK = {"role": "user", "content": [{"type": "text", "text": "Where does LTH-4 stand?"}]}
PLAIN = {"role": "user", "content": "Where does LTH-5 stand?"}
# A reply kept without its note call: its agent hash is of what the agent got, not of the body.
NOTED = {"role": "assistant", "content": [{"type": "text", "text": "On it."}]}
SHOWN_HASH = content_hash({"role": "assistant", "content": [{"type": "text", "text": "On it."}], "shown": True})


async def test_hashes_of_one_text_block_are_made_again_and_others_kept(postgres_url: str) -> None:
    url = await fresh_database(postgres_url, migrated=False)
    config = _alembic_config(url)
    engine = create_async_engine(url)
    rows = [(1, BLOCK, content_hash(BLOCK)), (2, PLAIN, content_hash(PLAIN)), (3, NOTED, SHOWN_HASH)]
    try:
        async with engine.begin() as connection:
            def to_0028(sync_connection) -> None:  # type: ignore[no-untyped-def]
                config.attributes["connection"] = sync_connection
                command.upgrade(config, "0028")

            await connection.run_sync(to_0028)
            await connection.execute(text("INSERT INTO tenants (id, name) VALUES ('t_old', 'old')"))
            pk = (await connection.execute(text(
                "INSERT INTO memories (tenant_id, memory_id) VALUES ('t_old', 'm') RETURNING id"))).scalar_one()
            for seq, body, stored in rows:
                await connection.execute(text(
                    "INSERT INTO messages (memory_pk, tenant_id, seq, turn, role, content_hash, body, at, tokens, "
                    "agent_hash, agent_optional) VALUES (:pk, 't_old', :seq, 1, :role, :hash, CAST(:body AS jsonb), "
                    "now(), 5, :agent, false)"),
                    {"pk": pk, "seq": seq, "role": body["role"], "hash": content_hash(body),
                     "body": json.dumps(body), "agent": stored})
        await upgrade_to_head(url)
        async with engine.connect() as connection:
            held = dict((await connection.execute(text("SELECT seq, agent_hash FROM messages ORDER BY seq"))).all())
    finally:
        await engine.dispose()
    assert held[1] == agent_hash(BLOCK) == content_hash({"role": "user", "content": "Where does LTH-4 stand?"})
    assert held[2] == content_hash(PLAIN)  # a text content hashed as ever
    assert held[3] == SHOWN_HASH  # not the body's own hash: left alone
