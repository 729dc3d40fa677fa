"""`lethe mcp`'s tools check their arguments by the gateway's own bounds, so a model's mistake is named by the
argument before any call, and nothing the gateway takes is refused."""

from __future__ import annotations

from typing import Any

import httpx

from api.schemas import MEMORY_ID_PATTERN
from cli.mcp_server import bearer_key, build_server
from service.facts import MAX_NAME, MAX_NOTE, MAX_QUERY, MAX_SEARCH


async def _schemas() -> dict[str, dict[str, Any]]:
    async with httpx.AsyncClient(base_url="http://lethe") as http:
        tools = await build_server(http, lambda _ctx: "key").list_tools()
    return {tool.name: tool.input_schema["properties"] for tool in tools}


def _given(argument: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema when given (not null)."""
    return next((a for a in argument.get("anyOf", [argument]) if a.get("type") != "null"), argument)


async def test_the_tools_bounds_are_the_gateways() -> None:
    schemas = await _schemas()
    # Every tool takes a memory or a user, by the gateway's own patterns (X-Lethe-User: at most 100 characters).
    assert {name: _given(args["memory_id"])["pattern"] for name, args in schemas.items()} == dict.fromkeys(
        schemas, MEMORY_ID_PATTERN.pattern)
    assert {name: _given(args["user_id"])["pattern"] for name, args in schemas.items()} == dict.fromkeys(
        schemas, MEMORY_ID_PATTERN.pattern.replace("128", "100"))
    assert schemas["add_fact"]["note"]["maxLength"] == schemas["correct_fact"]["note"]["maxLength"] == MAX_NOTE
    assert schemas["add_fact"]["subject"]["maxLength"] == schemas["add_fact"]["object"]["maxLength"] == MAX_NAME
    assert schemas["search_memory"]["query"]["maxLength"] == MAX_QUERY
    assert schemas["search_memory"]["limit"]["maximum"] == MAX_SEARCH


def test_only_a_bearer_key_is_taken() -> None:
    assert bearer_key("Bearer lethe_abc") == bearer_key("bearer  lethe_abc ") == "lethe_abc"
    assert [bearer_key(h) for h in (None, "", "Bearer", "Bearer ", "Basic abc", "Bearer a b")] == [None] * 6
