"""Input real clients send that Postgres or the parser could not take as it is: kept exactly, or refused."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus

from config.settings import Settings
from tests.integration.security.conftest import Strict
from tests.support import eventually
from workflows.memory import MemoryWorkflow, workflow_id

ESC = "\ue000"  # the store's own escape character must round-trip as well


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_nul_in_messages_and_tool_outputs_round_trips(http: httpx.AsyncClient, tenant: tuple[str, str]) -> None:
    key = tenant[1]
    call = {"id": "call_\x00_1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"p\": \"a\\\\u0000\"}"}}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Read the binary header\x00 please " + ESC + "0 literally"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_\x00_1", "content": "MZ\x00\x00\x90\x00 header" + ESC,
         "x-meta\x00key": ["\x00", ESC + "e"]},
    ]
    body = {"model": "gpt-4o-mini", "messages": history}
    first = await http.post("/v1/memories/nul/decorate", json=body, headers=_auth(key))
    assert first.status_code == 200, first.text
    assert first.json()["request"]["messages"] == history  # handed back exactly

    reply = {"choices": [{"message": {"role": "assistant", "content": "Found \x00 bytes."}}]}
    reported = await http.post("/v1/memories/nul/report", json={"decorate_id": first.json()["decorate_id"],
                                                                  "response": reply}, headers=_auth(key))
    assert reported.status_code == 200, reported.text
    assert reported.json()["response"] == reply

    # Resent with the reply: recognised (nothing stored twice), and the stored NULs come back as sent.
    again = {"model": "gpt-4o-mini", "messages": [*history, reply["choices"][0]["message"],
                                                  {"role": "user", "content": "Thanks"}]}
    second = await http.post("/v1/memories/nul/decorate", json=again, headers=_auth(key))
    assert second.status_code == 200, second.text
    assert second.json()["request"]["messages"] == again["messages"]

    export = json.loads((await http.get("/v1/memories/nul/export", headers=_auth(key))).content)
    assert [m["body"] for m in export["messages"]] == again["messages"]


async def test_a_clock_at_the_far_bound_leaves_the_lane_working(
    http: httpx.AsyncClient, tenant: tuple[str, str], temporal_client: Client
) -> None:
    tenant_id, key = tenant
    far = (datetime.now(UTC) + timedelta(days=49 * 365)).isoformat()
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello from the future."}]}
    response = await http.post("/v1/memories/future/decorate", json=body, headers={**_auth(key), "X-Lethe-Now": far})
    assert response.status_code == 200, response.text
    handle = temporal_client.get_workflow_handle(workflow_id(tenant_id, "future"))

    async def caught_up() -> bool:
        try:
            return (await handle.query(MemoryWorkflow.lane)).done_seq >= 1
        except Exception:  # noqa: BLE001 - not started yet
            return False

    await eventually(caught_up, timeout=30)
    await asyncio.sleep(1)  # time for a timer far ahead to be set, or to fail
    history = await handle.fetch_history()
    kinds = {EventType.Name(event.event_type) for event in history.events}
    # The sleep timer 24 h after that message is set far ahead; nothing fails or retries.
    assert "EVENT_TYPE_TIMER_STARTED" in kinds or "EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW" in kinds, kinds
    assert not kinds & {"EVENT_TYPE_WORKFLOW_TASK_FAILED", "EVENT_TYPE_ACTIVITY_TASK_FAILED",
                        "EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT"}, kinds
    description = await handle.describe()
    assert description.status == WorkflowExecutionStatus.RUNNING
    assert [a.attempt for a in description.raw_description.pending_activities if a.attempt > 1] == []


async def test_a_body_that_stops_arriving_is_answered_408(strict: Strict) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", strict.settings.gateway.port)
    writer.write(b"POST /v1/memories/m/decorate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer nobody\r\nContent-Length: 1000\r\n\r\n{\"model\": ")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(4096), timeout=10)  # the idle time is 1 s
    writer.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"field":"body"' in answer


async def test_a_declared_length_over_the_limit_is_refused_before_reading(
    http: httpx.AsyncClient, settings: Settings, tenant: tuple[str, str]
) -> None:
    url = http.base_url
    reader, writer = await asyncio.open_connection(url.host, url.port)
    # Only the headers are sent: the answer must come without the body ever arriving.
    too_long = settings.limits.max_body_bytes + 1
    writer.write(f"POST /v1/memories/m/decorate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Authorization: Bearer {tenant[1]}\r\nContent-Length: {too_long}\r\n\r\n".encode())
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(4096), timeout=10)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


async def test_a_chunked_body_over_the_limit_is_cut_off(
    http: httpx.AsyncClient, settings: Settings, tenant: tuple[str, str]
) -> None:
    async def stream() -> Any:
        chunk = b" " * 65536
        for _ in range(settings.limits.max_body_bytes // len(chunk) + 2):
            yield chunk

    response = await http.post("/v1/memories/m/decorate", content=stream(),
                               headers={**_auth(tenant[1]), "Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]["field"] == "body"
