"""An MCP server over one tenant's memories: search, add, correct, forget and read a memory's facts.

A thin client of the gateway through `lethe.client.AsyncLethe`: it never touches Postgres or Temporal, and each
call carries an API key, so the gateway decides what the caller may see. Over stdio the key is the process's
(LETHE_KEY); over streamable HTTP it is each request's own `Authorization: Bearer <key>`, and a request without
one is refused with 401 before any tool runs.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any

import httpx
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from contracts.version import VERSION
from lethe.client import AsyncLethe, FactRecord, LetheAPIError

__all__ = ["BearerGate", "bearer_key", "build_server"]

# The gateway's own bounds (api/schemas.py, service/facts.py), checked here so a model's mistake is named by the
# tool's argument before any call (tests/unit/test_mcp_tools.py holds them to the gateway's).
MemoryId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._:-]{1,128}$",
                                description="The memory (one conversation): 1-128 of A-Z a-z 0-9 . _ : -")]
UserId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._:-]{1,100}$",
                              description="The person (X-Lethe-User): their facts from all their conversations")]
FactId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._:-]{1,80}$",
                              description="A fact's id, as search_memory or read_facts show it")]
Note = Annotated[str, Field(min_length=1, max_length=4000, pattern=r"\S",
                            description="The fact as one sentence that reads alone")]
Name = Annotated[str, Field(min_length=1, max_length=400, pattern=r"\S")]
Query = Annotated[str, Field(min_length=1, max_length=2000, pattern=r"\S", description="What to look for, in words")]

# The gateway names fields by its own parameters; the tools' arguments are named for a model.
_ARGUMENT = {"q": "query"}
_BEARER = re.compile(r"^bearer\s+(\S+)\s*$", re.IGNORECASE)

KeyOf = Callable[[Context], str]


def bearer_key(authorization: str | None) -> str | None:
    """The API key of an `Authorization: Bearer <key>` header, or None."""
    found = _BEARER.match(authorization or "")
    return found.group(1) if found else None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _fact(record: FactRecord) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": record.fact_key, "note": record.note, "subject": record.subject,
                             "object": record.object, "source": record.source, "at": record.at}
    if record.milestone:
        shown["milestone"] = True
    if record.conflict_with:
        shown["conflicts_with"] = record.conflict_with  # unsettled: the facts block shows both
    if record.origin_memory_id:
        shown["from"] = record.origin_memory_id  # a user's fact: the conversation it came from
    return shown


def _owner(memory_id: str | None, user_id: str | None) -> dict[str, str]:
    """Whose facts a call is about: one memory, or one user across their conversations."""
    if (memory_id is None) == (user_id is None):
        raise ToolError("memory_id or user_id: name one of them (a conversation, or a person), not both")
    return {"memory_id": memory_id} if memory_id is not None else {"user_id": user_id}  # type: ignore[dict-item]


async def _call(base_url: str, work: Awaitable[Any]) -> Any:
    """The gateway's answer, or a tool error a model can act on (naming the argument at fault)."""
    try:
        return await work
    except LetheAPIError as exc:
        if exc.status == 401:
            raise ToolError("the Lethe gateway refused the API key (401): check LETHE_KEY or the Authorization "
                            "header") from exc
        field = _ARGUMENT.get(exc.field or "", exc.field)
        raise ToolError(f"{field + ': ' if field else ''}{exc.message} ({exc.status} {exc.type})") from exc
    except httpx.TransportError as exc:
        raise ToolError(f"cannot reach the Lethe gateway at {base_url}: {type(exc).__name__}") from exc


def build_server(http: httpx.AsyncClient, key_of: KeyOf) -> MCPServer:
    """The server's five tools; `http` is the gateway's connection pool, `key_of` a call's API key."""
    server = MCPServer("lethe", version=VERSION, instructions=(
        "Lethe keeps a knowledge graph of facts per memory (one conversation, named by its memory_id), and one "
        "per person across their conversations (named by user_id). Search it before answering from what was "
        "said earlier; add what is worth keeping as one fact per sentence; correct or forget a fact by the id "
        "search_memory or read_facts gives. Each tool takes a memory_id or a user_id."))
    base_url = str(http.base_url)

    def lethe(ctx: Context) -> AsyncLethe:
        # One pool for every caller; each call carries its caller's key.
        return AsyncLethe(base_url, key_of(ctx), http_client=http)

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    async def search_memory(query: Query, ctx: Context, memory_id: MemoryId | None = None,
                            user_id: UserId | None = None,
                            limit: Annotated[int, Field(ge=1, le=20, description="How many results, 1-20")] = 10,
                            ) -> str:
        """Search a memory's facts in force, then passages of its older conversation, best match first. Use it
        before answering from anything said earlier. A fact has an `id` (for correct_fact and forget_fact), its
        `note`, the `subject` and `object` it links, its `source` and date `at`; a passage has `text` and the
        turns it came from. A fact just added is found once the memory has integrated it (seconds). With
        `user_id`, the person's facts from all their conversations, each with the conversation it came from."""
        owner = _owner(memory_id, user_id)
        found = await _call(base_url, lethe(ctx).search_facts(memory_id, query, limit, user=user_id))
        results = []
        for hit in found.results:
            if hit.kind == "fact":
                results.append({"kind": "fact", "id": hit.id, "note": hit.note, "subject": hit.subject,
                                "object": hit.object, "source": hit.source, "at": hit.at,
                                "score": round(hit.score, 4),
                                **({"from": origin} if (origin := getattr(hit, "origin_memory_id", None)) else {})})
            else:
                results.append({"kind": hit.kind, "id": hit.id, "text": hit.text,
                                "turns": [hit.first_turn, hit.last_turn], "at": hit.at,
                                "score": round(hit.score, 4)})
        return _compact({**owner, "query": found.query, "results": results})

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=False, open_world_hint=False))
    async def add_fact(note: Note,
                       subject: Annotated[Name, Field(description="The entity the fact is about")],
                       object: Annotated[Name, Field(description="The other entity (or value) it links to")],
                       ctx: Context, memory_id: MemoryId | None = None, user_id: UserId | None = None) -> str:
        """Add one fact to a memory: a sentence that reads on its own (who, what, when), and the two entities it
        links, e.g. note "Ana moved to Lisbon in 2024", subject "Ana", object "Lisbon". The memory brings it
        into its graph (a restatement merged, a contradicted fact retired) within seconds. Answers its `id`."""
        _owner(memory_id, user_id)
        written = await _call(base_url, lethe(ctx).add_fact(memory_id, note, subject, object, user=user_id))
        return _compact({"id": written.id, "note": written.note, "subject": written.subject,
                         "object": written.object, "at": written.at})

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False, open_world_hint=False))
    async def correct_fact(fact_id: FactId, note: Note, ctx: Context, memory_id: MemoryId | None = None,
                           user_id: UserId | None = None) -> str:
        """Replace a fact that is wrong or out of date with a corrected sentence; its subject and object are
        kept. The old fact is retired at once and the answer's `id` is the new one's. A fact no longer in force
        (already corrected, forgotten or merged) cannot be corrected: the error names the one to correct."""
        _owner(memory_id, user_id)
        written = await _call(base_url, lethe(ctx).correct_fact(memory_id, fact_id, note, user=user_id))
        return _compact({"id": written.id, "corrects": written.corrects, "note": written.note,
                         "subject": written.subject, "object": written.object, "at": written.at})

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True, open_world_hint=False))
    async def forget_fact(fact_id: FactId, ctx: Context, memory_id: MemoryId | None = None,
                          user_id: UserId | None = None) -> str:
        """Forget a fact (and its restatements) the user wants gone: it is never searched, recalled or shown
        again. Answers the ids forgotten."""
        _owner(memory_id, user_id)
        done = await _call(base_url, lethe(ctx).forget_fact(memory_id, fact_id, user=user_id))
        return _compact({"forgotten": done.facts})

    @server.tool(annotations=read_only)
    async def read_facts(ctx: Context, memory_id: MemoryId | None = None, user_id: UserId | None = None) -> str:
        """Read a memory's facts in force: `facts_block` is the text the model is shown in place of the
        conversation that faded (null while nothing has faded), and `facts` every fact in force with its `id`,
        `note`, `subject`, `object`, `source` and date, oldest first (facts added with add_fact too). With
        `user_id`, the person's facts in force (no facts block: that is a conversation's), each with `from`."""
        owner = _owner(memory_id, user_id)
        client = lethe(ctx)
        if user_id is not None:
            listing = await _call(base_url, client.facts(user=user_id))
            return _compact({**owner, "facts_block": None, "facts": [_fact(f) for f in listing.facts if f.in_force]})
        state, listing = await _call(base_url, asyncio.gather(client.state(memory_id), client.facts(memory_id)))
        return _compact({**owner, "facts_block": state.facts_block,
                         "facts": [_fact(f) for f in listing.facts if f.in_force]})

    return server


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerGate:
    """Refuses an HTTP request without `Authorization: Bearer <key>` with 401, before the MCP app sees it. The
    key itself is checked by the gateway on every call the tools make with it."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if bearer_key(headers.get(b"authorization", b"").decode("latin-1")) is None:
                body = _compact({"error": {"type": "unauthorized", "field": "Authorization",
                                           "message": "send the tenant's Lethe API key as Authorization: Bearer "
                                                      "<key>"}}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="lethe"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
