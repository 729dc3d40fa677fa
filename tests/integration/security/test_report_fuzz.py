"""Report's body fuzzed against the real gateway, in both shapes, as decorate's is.

Hypothesis builds a well-formed provider reply and changes one thing in it (tests/integration/security/
report_bodies.py): a wrong type or value at a position Lethe validates, a missing field, a lone surrogate escape,
nesting past the limit, too many items, the other shape's reply, a body past the size limit; or something that
keeps it well-formed (NUL bytes, fields Lethe does not read, nesting and sizes just under the limits). A malformed
body gets a 4xx naming the field and leaves the memory exactly as it was; a well-formed one gets a 2xx and its
reply stored as sent. Derandomized, with a fixed number of examples, so a run takes tens of seconds.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from sqlalchemy import text

from config.settings import Settings
from store.db import Database
from tests.integration.conftest import _new_tenant
from tests.integration.security.report_bodies import Case, cases
from tests.support import free_port, serve_gateway

LIMIT = 256 * 1024  # this gateway's body limit: sizes near it cost little to send
REQUESTS = {
    "chat_completions": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Where is the checklist?"}]},
    "responses": {"model": "gpt-4o-mini", "input": [{"role": "user", "content": "Where is the checklist?"}]},
}

# What a report may change, read from the store: counters, history, events, the note's facts, the sizes learned.
SNAPSHOT = text("""
    SELECT m.last_message_seq, m.last_turn, m.latest_at, m.size_ratios::text,
           (SELECT count(*) FROM messages WHERE memory_pk = m.id),
           (SELECT count(*) FROM outbox WHERE memory_pk = m.id),
           (SELECT count(*) FROM decorations WHERE memory_pk = m.id AND reported_at IS NOT NULL),
           (SELECT count(*) FROM note_calls WHERE memory_pk = m.id),
           (SELECT count(*) FROM facts WHERE memory_pk = m.id),
           (SELECT count(*) FROM idempotency_records WHERE tenant_id = m.tenant_id AND memory_id = m.memory_id),
           (SELECT count(*) FROM size_ratios WHERE tenant_id = m.tenant_id)
    FROM memories m WHERE m.tenant_id = :tenant AND m.memory_id = :memory
""")
STORED = text("""
    SELECT body FROM messages WHERE memory_pk = (SELECT id FROM memories WHERE tenant_id = :tenant
                                                 AND memory_id = :memory) ORDER BY seq
""")


@pytest.fixture(scope="module")
async def small_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    """The real gateway with a small body limit, so bodies near and over it are quick to send."""
    async with serve_gateway(settings.replace(port=free_port(), max_body_bytes=LIMIT)) as url:
        yield url


class Reporter:
    """One tenant's memories under test: a pending decorate in each shape, a fresh memory once one is reported."""

    def __init__(self, client: httpx.AsyncClient, db: Database, tenant_id: str) -> None:
        self.client, self.db, self.tenant_id = client, db, tenant_id
        self.pending: dict[str, tuple[str, str]] = {}  # shape -> (memory id, decorate id)

    async def decorate(self, shape: str) -> tuple[str, str]:
        if shape not in self.pending:
            memory = f"fuzz-{uuid.uuid4().hex[:12]}"
            answer = await self.client.post(f"/v1/memories/{memory}/decorate", json=REQUESTS[shape])
            assert answer.status_code == 200, answer.text
            self.pending[shape] = (memory, answer.json()["decorate_id"])
        return self.pending[shape]

    async def snapshot(self, memory: str) -> tuple[Any, ...]:
        async with self.db.session() as session:
            row = (await session.execute(SNAPSHOT, {"tenant": self.tenant_id, "memory": memory})).one()
        return tuple(row)

    async def stored(self, memory: str) -> list[Any]:
        async with self.db.session() as session:
            rows = (await session.execute(STORED, {"tenant": self.tenant_id, "memory": memory})).scalars().all()
        return list(rows)

    async def check(self, case: Case) -> None:
        memory, decorate_id = await self.decorate(case.shape)
        before = await self.snapshot(memory)
        body = case.text(decorate_id, LIMIT)
        try:
            answer = await self.client.post(f"/v1/memories/{memory}/report", content=body,
                                            headers={"Content-Type": "application/json"})
        except httpx.TransportError as exc:
            raise AssertionError(f"{case.change}: the connection dropped ({exc!r})") from exc
        if answer.status_code == 200:
            self.pending.pop(case.shape)  # reported, rightly or not: the next case needs a decorate of its own
        assert answer.status_code < 500, f"{case.change}: {answer.status_code} {answer.text[:300]}"
        if not case.fields:
            assert answer.status_code == 200, f"{case.change}: {answer.status_code} {answer.text[:300]}"
            assert set(answer.json()) == {"response", "needs_continuation"}
            await self._stored_as_sent(memory, case, json.loads(body))
            return
        error = answer.json().get("error", {})
        named = error.get("field") or ""
        assert answer.status_code == case.status, f"{case.change}: {answer.status_code} {answer.text[:300]}"
        matches = named.startswith(case.fields) if case.prefix else named in case.fields
        assert matches and error.get("message"), f"{case.change}: named {named!r}, not {case.fields}"
        assert await self.snapshot(memory) == before, f"{case.change}: the memory changed"

    async def _stored_as_sent(self, memory: str, case: Case, body: dict[str, Any]) -> None:
        """The reply's messages kept exactly as the model sent them (NUL bytes, numbers, unknown fields)."""
        reply = body["response"]
        sent = [reply["choices"][0]["message"]] if case.shape == "chat_completions" else reply["output"]
        stored = await self.stored(memory)  # a fresh memory: the user's message, the reply, the note's results
        assert stored[1:1 + len(sent)] == sent, f"{case.change}: stored {stored!r}"


@pytest.fixture(scope="module")
async def reporter(small_gateway: str, db: Database) -> AsyncIterator[Reporter]:
    async with httpx.AsyncClient(base_url=small_gateway, timeout=30) as admin:
        tenant_id, key = await _new_tenant(admin, "fuzz-report")
    async with httpx.AsyncClient(base_url=small_gateway, timeout=30,
                                 headers={"Authorization": f"Bearer {key}"}) as client:
        yield Reporter(client, db, tenant_id)


@settings(max_examples=400, derandomize=True, deadline=None, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(case=cases())
async def test_report_refuses_every_malformed_reply_naming_the_field_and_keeps_the_well_formed(
    reporter: Reporter, case: Case
) -> None:
    event(case.change.split(" at ")[0] if case.change.startswith(("lone", "too deep", "nested")) else
          case.change.split(" ")[0])
    await reporter.check(case)


# --- what the fuzzing found, each by what the model returned ---

DEEP_ARGUMENTS = "[" * 30_000 + "]" * 30_000  # past Python's JSON parser (a 500 before)


def _chat(**message: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": None, **message},
                         "finish_reason": "stop"}]}


def _note_call(arguments: str, call_id: str | None = "call_1") -> dict[str, Any]:
    call = {"type": "function", "function": {"name": "note", "arguments": arguments}}
    return call if call_id is None else {"id": call_id, **call}


async def _refused(reporter: Reporter, shape: str, response: Any, field: str) -> None:
    memory, decorate_id = await reporter.decorate(shape)
    before = await reporter.snapshot(memory)
    answer = await reporter.client.post(f"/v1/memories/{memory}/report",
                                        json={"decorate_id": decorate_id, "response": response})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    assert await reporter.snapshot(memory) == before


async def test_a_note_call_whose_arguments_nest_past_the_parser_is_refused_naming_them(reporter: Reporter) -> None:
    await _refused(reporter, "chat_completions", _chat(tool_calls=[_note_call(DEEP_ARGUMENTS)]),
                   "response.choices[0].message.tool_calls[0].function.arguments")
    await _refused(reporter, "responses", {"output": [
        {"type": "function_call", "call_id": "call_1", "name": "note", "arguments": DEEP_ARGUMENTS}]},
        "response.output[0].arguments")


async def test_another_tools_deeply_nested_arguments_pass_through(reporter: Reporter) -> None:
    # Lethe never parses them: they are the agent's to read.
    memory, decorate_id = await reporter.decorate("chat_completions")
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": DEEP_ARGUMENTS}}
    answer = await reporter.client.post(f"/v1/memories/{memory}/report", json={
        "decorate_id": decorate_id, "response": _chat(tool_calls=[call])})
    reporter.pending.pop("chat_completions")
    assert answer.status_code == 200, answer.text
    assert answer.json()["response"]["choices"][0]["message"]["tool_calls"] == [call]


async def test_a_reply_of_thousands_of_items_is_refused_at_once(reporter: Reporter) -> None:
    # Each item cost a stored row: 500,000 of them held the report for a minute and a half.
    started = time.perf_counter()
    await _refused(reporter, "responses", {"output": [{"type": "x"}] * 3000}, "response.output")
    await _refused(reporter, "chat_completions", {"choices": _chat()["choices"] * 3000}, "response.choices")
    await _refused(reporter, "chat_completions", _chat(tool_calls=[
        {"id": f"c{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in range(3000)]),
        "response.choices[0].message.tool_calls")
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("count", [-1, 5.0, "5", True, 2**31, 10**30])
async def test_usage_negative_fractional_textual_or_huge_is_refused_naming_the_count(
    reporter: Reporter, count: Any
) -> None:
    await _refused(reporter, "chat_completions", {**_chat(content="hi"), "usage": {"prompt_tokens": count}},
                   "response.usage.prompt_tokens")
    await _refused(reporter, "responses", {"output": [], "usage": {"input_tokens": count}},
                   "response.usage.input_tokens")


async def test_a_decorate_id_holding_a_nul_is_refused_naming_it(reporter: Reporter) -> None:
    # The store cannot look a NUL up: a 500 before.
    memory, decorate_id = await reporter.decorate("chat_completions")
    for wrong in (decorate_id + "\x00", "dec_\x00"):
        answer = await reporter.client.post(f"/v1/memories/{memory}/report", json={
            "decorate_id": wrong, "response": _chat(content="hi")})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == "decorate_id"


async def test_a_note_call_without_an_id_is_refused(reporter: Reporter) -> None:
    # Taken before, its result answered a call named "": a history the provider refuses on the next call.
    await _refused(reporter, "chat_completions", _chat(tool_calls=[_note_call("{}", call_id=None)]),
                   "response.choices[0].message.tool_calls[0].id")
    await _refused(reporter, "responses", {"output": [{"type": "function_call", "name": "note", "arguments": "{}"}]},
                   "response.output[0].call_id")


async def test_content_parts_that_are_not_objects_or_lack_their_text_are_refused(reporter: Reporter) -> None:
    await _refused(reporter, "chat_completions", _chat(content=[1, 2]), "response.choices[0].message.content[0]")
    await _refused(reporter, "chat_completions", _chat(content=[{"type": "text", "text": 5}]),
                   "response.choices[0].message.content[0].text")
    await _refused(reporter, "responses", {"output": [{"type": "message", "role": "assistant", "content": 5}]},
                   "response.output[0].content")
    await _refused(reporter, "responses", {"output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text"}]}]},
        "response.output[0].content[0].text")


async def test_a_note_call_in_a_second_choice_leaves_history_alone(reporter: Reporter) -> None:
    # Only the first choice is kept: a result for the other's call would answer a call history never held.
    memory, decorate_id = await reporter.decorate("chat_completions")
    second = _chat(tool_calls=[_note_call(json.dumps({"notes": [
        {"note": "The checklist is in the wiki.", "subject": "checklist", "object": "wiki"}]}))])["choices"][0]
    answer = await reporter.client.post(f"/v1/memories/{memory}/report", json={"decorate_id": decorate_id,
                                        "response": {"choices": [*_chat(content="In the wiki.")["choices"],
                                                                 {**second, "index": 1}]}})
    reporter.pending.pop("chat_completions")
    assert answer.status_code == 200, answer.text
    assert [m.get("role") for m in await reporter.stored(memory)] == ["user", "assistant"]


async def test_note_arguments_that_are_not_json_are_answered_not_recorded(reporter: Reporter) -> None:
    # The model's own mistake, well-formed as a reply: history tells it, and the next call asks again.
    memory, decorate_id = await reporter.decorate("chat_completions")
    answer = await reporter.client.post(f"/v1/memories/{memory}/report", json={
        "decorate_id": decorate_id, "response": _chat(tool_calls=[_note_call("{not json")])})
    reporter.pending.pop("chat_completions")
    assert answer.status_code == 200, answer.text
    assert answer.json()["needs_continuation"] is True
    result = (await reporter.stored(memory))[-1]
    assert result["role"] == "tool" and result["content"].startswith("Not recorded")


async def test_a_report_over_the_body_limit_is_answered_413_not_dropped(
    http: httpx.AsyncClient, tenant: tuple[str, str], settings: Settings
) -> None:
    # The answer went out before the body was read, and the connection closed on the unread rest: the client,
    # still sending, saw it reset and never read the 413.
    auth = {"Authorization": f"Bearer {tenant[1]}"}
    decorated = await http.post("/v1/memories/big/decorate", json=REQUESTS["chat_completions"], headers=auth)
    reply = _chat(content="x" * (settings.limits.max_body_bytes + 10))
    for _ in range(2):  # and again, on a new connection
        answer = await http.post("/v1/memories/big/report", headers=auth,
                                 json={"decorate_id": decorated.json()["decorate_id"], "response": reply})
        assert answer.status_code == 413
        assert answer.json()["error"]["field"] == "body"
