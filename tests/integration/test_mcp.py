"""`lethe mcp` against the real gateway: an MCP client lists the tools, adds a fact, finds it, corrects and forgets
it, over stdio (the command spawned with LETHE_URL and LETHE_KEY) and over streamable HTTP (each request's own key).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.support import eventually, free_port, memory_with_a_turn

LETHE = str(Path(sys.executable).parent / "lethe")
TOOLS = {"search_memory", "add_fact", "correct_fact", "forget_fact", "read_facts"}
FACT = {"note": "The Kestrel launch is planned for 12 March.", "subject": "Kestrel launch", "object": "12 March"}
QUERY = "Kestrel launch"  # by words: the test gateway searches without recall's vectors


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content if part.type == "text")


async def _tool(client: Client, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, _text(result)
    return json.loads(_text(result))


async def _error(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.is_error, _text(result)
    return _text(result)


async def _found(client: Client, memory_id: str, fact_id: str) -> list[dict[str, Any]]:
    hits = await _tool(client, "search_memory", memory_id=memory_id, query=QUERY, limit=5)
    return [h for h in hits["results"] if h["kind"] == "fact" and h["id"] == fact_id]


async def _round_trip(client: Client, memory_id: str) -> str:
    """Add, find (once the memory's lane integrated it), correct, forget; returns the corrected fact's id."""
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
    added = await _tool(client, "add_fact", memory_id=memory_id, **FACT)
    found = await eventually(lambda: _found(client, memory_id, added["id"]), timeout=60)
    assert found[0]["note"] == FACT["note"] and found[0]["subject"] == FACT["subject"]

    corrected = await _tool(client, "correct_fact", memory_id=memory_id, fact_id=added["id"],
                            note="The Kestrel launch moved to 19 March.")
    assert corrected["corrects"] == added["id"] and corrected["subject"] == FACT["subject"]
    read = await _tool(client, "read_facts", memory_id=memory_id)
    assert [(f["id"], f["note"]) for f in read["facts"]] == [(corrected["id"], "The Kestrel launch moved to 19 March.")]
    await eventually(lambda: _found(client, memory_id, corrected["id"]), timeout=60)

    forgotten = await _tool(client, "forget_fact", memory_id=memory_id, fact_id=corrected["id"])
    assert corrected["id"] in forgotten["forgotten"]
    assert await _found(client, memory_id, corrected["id"]) == []
    assert (await _tool(client, "read_facts", memory_id=memory_id))["facts"] == []
    return str(corrected["id"])


async def test_over_stdio_a_fact_is_added_found_corrected_and_forgotten(
    gateway: str, http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    _, key = tenant
    await memory_with_a_turn(http, key, "mcp-stdio")
    server = StdioServerParameters(command=LETHE, args=["mcp", "--transport", "stdio"],
                                   env={"LETHE_URL": gateway, "LETHE_KEY": key})
    async with Client(server) as client:
        await _round_trip(client, "mcp-stdio")
        # A model's mistakes come back as tool errors naming the argument at fault.
        assert "note" in await _error(client, "add_fact", memory_id="mcp-stdio", note="  ", subject="a", object="b")
        assert "limit" in await _error(client, "search_memory", memory_id="mcp-stdio", query="x", limit=500)
        assert "memory_id" in await _error(client, "read_facts", memory_id="no such memory!")
        missing = await _error(client, "forget_fact", memory_id="mcp-stdio", fact_id="api_nothing")
        assert "(404 not_found)" in missing


def test_over_stdio_without_a_key_the_command_says_what_is_missing(gateway: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("LETHE_KEY", "LETHE_URL")} | {"LETHE_URL": gateway}
    done = subprocess.run([LETHE, "mcp", "--transport", "stdio"], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "LETHE_KEY is not set" in done.stderr


@pytest.fixture
async def mcp_http(gateway: str) -> AsyncIterator[str]:
    """`lethe mcp --transport http` on a free port, calling the test gateway; its /mcp URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "LETHE_KEY"} | {"LETHE_URL": gateway}
    process = await asyncio.create_subprocess_exec(LETHE, "mcp", "--transport", "http", "--port", str(port),
                                                   env=env, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"

    async def listening() -> bool:
        assert process.returncode is None, "lethe mcp exited"
        try:
            async with httpx.AsyncClient() as probe:
                await probe.post(url, json={})
        except httpx.TransportError:
            return False
        return True

    try:
        await eventually(listening, timeout=30)
        yield url
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), timeout=30)


def _over_http(url: str, key: str) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=_auth(key), timeout=60)))


async def test_over_http_each_request_acts_with_its_own_key(
    mcp_http: str, http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    _, key = tenant
    await memory_with_a_turn(http, key, "mcp-http")
    add = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "add_fact", "arguments": {"memory_id": "mcp-http", **FACT}}}
    async with httpx.AsyncClient() as raw:
        refused = await raw.post(mcp_http, json=add, headers={"Accept": "application/json, text/event-stream"})
        wrong = await raw.post(mcp_http, json=add, headers={"Authorization": "Basic abc"})
    assert refused.status_code == wrong.status_code == 401, refused.text
    assert refused.headers["www-authenticate"].startswith("Bearer")
    listing = await http.get("/v1/memories/mcp-http/facts", headers=_auth(key))
    assert listing.json()["facts"] == []  # refused before the tool ran: nothing was added

    async with _over_http(mcp_http, key) as client:
        await _round_trip(client, "mcp-http")
        kept = await _tool(client, "add_fact", memory_id="mcp-http", note="The Kestrel launch party is at the harbour.",
                           subject="Kestrel launch", object="harbour")
        await eventually(lambda: _found(client, "mcp-http", kept["id"]), timeout=60)

    # Another tenant's key sees that tenant's memories only: this one is not found, and nothing in it changes.
    async with _over_http(mcp_http, other_tenant[1]) as stranger:
        assert "(404 not_found)" in await _error(stranger, "search_memory", memory_id="mcp-http", query=QUERY)
        assert "(404 not_found)" in await _error(stranger, "read_facts", memory_id="mcp-http")
        assert "(404 not_found)" in await _error(stranger, "forget_fact", memory_id="mcp-http", fact_id=kept["id"])
    async with _over_http(mcp_http, key) as client:
        assert [f["id"] for f in (await _tool(client, "read_facts", memory_id="mcp-http"))["facts"]] == [kept["id"]]


async def test_over_stdio_the_tools_take_a_user(
    gateway: str, http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    """With `user_id`, the tools act on the person's facts from all their conversations."""
    _, key = tenant
    named = await http.post("/v1/memories/mcp-user-chat/decorate", headers={**_auth(key), "X-Lethe-User": "rumi"},
                            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi."}]})
    assert named.status_code == 200, named.text
    server = StdioServerParameters(command=LETHE, args=["mcp", "--transport", "stdio"],
                                   env={"LETHE_URL": gateway, "LETHE_KEY": key})
    async with Client(server) as client:
        added = await _tool(client, "add_fact", user_id="rumi", **FACT)

        async def found() -> list[dict[str, Any]]:
            hits = await _tool(client, "search_memory", user_id="rumi", query=QUERY, limit=5)
            assert hits["user_id"] == "rumi"
            return [h for h in hits["results"] if h["kind"] == "fact" and h["id"] == added["id"]]

        assert (await eventually(found, timeout=60))[0]["note"] == FACT["note"]
        read = await _tool(client, "read_facts", user_id="rumi")
        assert [f["id"] for f in read["facts"]] == [added["id"]] and read["facts_block"] is None
        assert added["id"] in (await _tool(client, "forget_fact", user_id="rumi", fact_id=added["id"]))["forgotten"]
        assert (await _tool(client, "read_facts", user_id="rumi"))["facts"] == []
        both = await _error(client, "read_facts", user_id="rumi", memory_id="mcp-user-chat")
        assert "memory_id or user_id" in both
        assert "(404 not_found)" in await _error(client, "read_facts", user_id="nobody-here")
