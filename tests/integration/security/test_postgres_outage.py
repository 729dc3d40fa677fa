"""Postgres stopped in the middle of several conversations, then started again: while it is down every call
answers 503 with Retry-After; once it is back the retried calls succeed, and every turn is stored exactly once,
in order. A deployment of its own (its own embedded Postgres, which this test stops), so nothing else waits."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import httpx

from config.settings import Settings
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade_to_head
from tests.integration.conftest import ADMIN_TOKEN
from tests.support import free_port, serve_gateway

MEMORIES = 4
TURNS = 6
# The drill stops Postgres for 15 s; the suite keeps it short (LETHE_TEST_OUTAGE_SECONDS for the full one).
OUTAGE_SECONDS = float(os.environ.get("LETHE_TEST_OUTAGE_SECONDS", "3"))


def _key(path: str, body: dict[str, object]) -> str:
    return hashlib.sha256(f"{path}:{json.dumps(body)}".encode()).hexdigest()


async def _call(client: httpx.AsyncClient, path: str, body: dict[str, object], key: str,
                outage_answers: list[httpx.Response]) -> httpx.Response:
    """Send until it succeeds, as a client honouring Retry-After would; keep every 503 seen."""
    for _ in range(200):
        response = await client.post(path, json=body, headers={"Authorization": f"Bearer {key}",
                                                               "Idempotency-Key": _key(path, body)})
        if response.status_code != 503:
            assert response.status_code == 200, response.text
            return response
        outage_answers.append(response)
        await asyncio.sleep(min(float(response.headers["Retry-After"]), 0.5))
    raise AssertionError(f"{path} never succeeded")


async def _converse(client: httpx.AsyncClient, key: str, memory_id: str, seen: list[httpx.Response]) -> None:
    transcript: list[dict[str, object]] = []
    for turn in range(TURNS):
        transcript.append({"role": "user", "content": f"{memory_id} turn {turn}: what is next?"})
        decorated = await _call(client, f"/v1/memories/{memory_id}/decorate",
                                {"model": "gpt-4o-mini", "messages": list(transcript)}, key, seen)
        reply = {"role": "assistant", "content": f"{memory_id} answer {turn}."}
        await _call(client, f"/v1/memories/{memory_id}/report",
                    {"decorate_id": decorated.json()["decorate_id"], "response": {"choices": [{"message": reply}]}},
                    key, seen)
        transcript.append(reply)
        await asyncio.sleep(0.3)


async def test_postgres_outage_answers_503_and_loses_nothing(settings: Settings) -> None:
    root = Path(tempfile.mkdtemp(prefix="lethe-test-outage-"))
    root.chmod(0o755)
    server = EmbeddedPostgres(root / "data")
    url = server.start()
    try:
        await upgrade_to_head(url)
        own = settings.model_copy(update={"database_url": url, "port": free_port(),
                                          "temporal_task_queue": "outage-" + uuid.uuid4().hex[:8]})
        async with serve_gateway(own) as base, httpx.AsyncClient(base_url=base, timeout=30) as client:
            made = await client.post("/v1/admin/tenants", json={"name": "outage"},
                                     headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            key = made.json()["api_key"]
            seen: list[httpx.Response] = []
            talking = asyncio.gather(*(_converse(client, key, f"m{i}", seen) for i in range(MEMORIES)))
            await asyncio.sleep(1.0)
            await asyncio.to_thread(server.stop)
            await asyncio.sleep(OUTAGE_SECONDS)
            assert server.start() == url
            await talking

            assert seen, "no call fell into the outage"
            assert all(r.json()["error"]["type"] == "service_unavailable" and int(r.headers["Retry-After"]) > 0
                       for r in seen)
            for i in range(MEMORIES):
                export = json.loads((await client.get(f"/v1/memories/m{i}/export",
                                                      headers={"Authorization": f"Bearer {key}"})).content)
                contents = [m["body"]["content"] for m in export["messages"]]
                expected = [text for t in range(TURNS)
                            for text in (f"m{i} turn {t}: what is next?", f"m{i} answer {t}.")]
                assert contents == expected
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
