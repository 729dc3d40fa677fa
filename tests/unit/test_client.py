"""`lethe.client`'s retries: the same Idempotency-Key on every attempt, Retry-After obeyed, bad input not retried."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from lethe.client import AsyncLethe, Lethe, LetheAPIError

DECORATED = {"decorate_id": "dec_1", "shape": "chat_completions", "request": {"model": "m", "messages": []},
             "note_ask_turns": None, "slept": False, "estimated_tokens": 12}


def _flaky(seen: list[httpx.Request], failures: list[httpx.Response | Exception]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if failures:
            failure = failures.pop(0)
            if isinstance(failure, Exception):
                raise failure
            return failure
        return httpx.Response(200, json=DECORATED)

    return httpx.MockTransport(handle)


def test_retries_keep_one_idempotency_key() -> None:
    seen: list[httpx.Request] = []
    failures: list[httpx.Response | Exception] = [
        httpx.Response(503, headers={"Retry-After": "0"}, json={"error": {"type": "service_unavailable",
                                                                          "message": "down"}}),
        httpx.ConnectError("refused"),
        httpx.Response(429, headers={"Retry-After": "0"}),
    ]
    client = httpx.Client(base_url="http://lethe", transport=_flaky(seen, failures))
    lethe = Lethe("http://lethe", "key", http_client=client, max_retries=3)
    result = lethe.decorate("m1", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert result.decorate_id == "dec_1" and result.estimated_tokens == 12
    keys = {r.headers["Idempotency-Key"] for r in seen}
    assert len(seen) == 4 and len(keys) == 1 and seen[0].headers["Authorization"] == "Bearer key"


async def test_bad_input_is_raised_at_once_with_its_field() -> None:
    seen: list[httpx.Request] = []
    failures: list[httpx.Response | Exception] = [httpx.Response(422, json={"error": {
        "type": "invalid_request", "message": "messages: too short", "field": "messages"}})]
    client = httpx.AsyncClient(base_url="http://lethe", transport=_flaky(seen, failures))
    lethe = AsyncLethe("http://lethe", "key", http_client=client)
    with pytest.raises(LetheAPIError) as caught:
        await lethe.decorate("m1", {"model": "m", "messages": []})
    assert (caught.value.status, caught.value.field, len(seen)) == (422, "messages", 1)


def test_gives_up_after_its_retries() -> None:
    seen: list[httpx.Request] = []
    failures: list[httpx.Response | Exception] = [httpx.Response(503, headers={"Retry-After": "0"})] * 3
    client = httpx.Client(base_url="http://lethe", transport=_flaky(seen, failures))
    with pytest.raises(LetheAPIError) as caught:
        Lethe("http://lethe", "key", http_client=client, max_retries=2).decorate("m1", {"model": "m"})
    assert caught.value.status == 503 and len(seen) == 3


def _answering(seen: list[httpx.Request], status: int, body: Any) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handle)


WRITTEN = {"memory_id": "m1", "id": "api_2", "note": "Ana lives in Porto.", "subject": "Ana", "object": "Porto",
           "milestone": False, "source": "api", "at": "2026-01-01T00:00:00+00:00", "corrects": "api_1"}


def test_search_facts_asks_with_the_query_and_reads_typed_hits() -> None:
    seen: list[httpx.Request] = []
    answer = {"memory_id": "m1", "query": "where does Ana live", "results": [
        {"kind": "fact", "id": "api_1", "score": 0.5, "at": "2026-01-01T00:00:00+00:00", "note": "Ana lives in Lisbon.",
         "subject": "Ana", "object": "Lisbon", "source": "api"},
        {"kind": "passage", "id": 7, "score": 0.25, "at": "2026-01-01T00:00:00+00:00", "text": "we spoke of Ana",
         "first_turn": 1, "last_turn": 2}]}
    lethe = Lethe("http://lethe", "key", http_client=httpx.Client(base_url="http://lethe",
                                                                  transport=_answering(seen, 200, answer)))
    hits = lethe.search_facts("m1", "where does Ana live", limit=5)
    assert [(h.kind, h.id) for h in hits.results] == [("fact", "api_1"), ("passage", 7)]
    assert hits.results[0].note == "Ana lives in Lisbon." and hits.results[1].text == "we spoke of Ana"
    assert seen[0].url.path == "/v1/memories/m1/facts/search"
    assert dict(seen[0].url.params) == {"q": "where does Ana live", "limit": "5"}


async def test_add_and_correct_send_their_bodies_with_an_idempotency_key() -> None:
    seen: list[httpx.Request] = []
    lethe = AsyncLethe("http://lethe", "key", http_client=httpx.AsyncClient(
        base_url="http://lethe", transport=_answering(seen, 201, WRITTEN)))
    await lethe.add_fact("m1", "Ana lives in Lisbon.", "Ana", "Lisbon", idempotency_key="add-1")
    corrected = await lethe.correct_fact("m1", "api_1", "Ana lives in Porto.", object="Porto")
    assert (seen[0].method, seen[0].url.path, seen[0].headers["Idempotency-Key"]) == (
        "POST", "/v1/memories/m1/facts", "add-1")
    assert json.loads(seen[0].content) == {"note": "Ana lives in Lisbon.", "subject": "Ana", "object": "Lisbon",
                                           "milestone": False}
    # What a correction leaves out keeps the old fact's value, so it is not sent.
    assert seen[1].url.path == "/v1/memories/m1/facts/api_1/correct" and seen[1].headers["Idempotency-Key"]
    assert json.loads(seen[1].content) == {"note": "Ana lives in Porto.", "object": "Porto"}
    assert (corrected.id, corrected.corrects) == ("api_2", "api_1")


def test_forget_erases_only_when_asked_and_facts_tell_which_are_in_force() -> None:
    seen: list[httpx.Request] = []
    forgotten = {"memory_id": "m1", "id": "api_1", "done": "erased", "facts": ["api_1"]}
    lethe = Lethe("http://lethe", "key", http_client=httpx.Client(base_url="http://lethe",
                                                                  transport=_answering(seen, 200, forgotten)))
    lethe.forget_fact("m1", "api_1")
    assert lethe.forget_fact("m1", "api_1", erase=True).done == "erased"
    assert [(r.method, r.url.path, dict(r.url.params)) for r in seen] == [
        ("DELETE", "/v1/memories/m1/facts/api_1", {}), ("DELETE", "/v1/memories/m1/facts/api_1", {"erase": "true"})]

    listing = {"memory_id": "m1", "facts": [
        {"fact_key": "api_1", "note": "Ana lives in Lisbon.", "subject": "Ana", "object": "Lisbon",
         "retired_at": "2026-01-02T00:00:00+00:00", "retired_by": "api_2", "episode_keys": []},
        {"fact_key": "api_2", "note": "Ana lives in Porto.", "subject": "Ana", "object": "Porto", "retired_at": None}]}
    lethe = Lethe("http://lethe", "key", http_client=httpx.Client(base_url="http://lethe",
                                                                  transport=_answering(seen, 200, listing)))
    facts = lethe.facts("m1")
    assert [(f.fact_key, f.in_force) for f in facts.facts] == [("api_1", False), ("api_2", True)]
    assert facts.facts[0].model_extra == {"episode_keys": []}  # fields the client does not type are kept


async def test_a_fact_the_memory_does_not_hold_is_an_error_with_its_status() -> None:
    seen: list[httpx.Request] = []
    missing = {"error": {"type": "not_found", "message": "no fact 'api_9' in memory 'm1'", "field": "fact_id"}}
    lethe = AsyncLethe("http://lethe", "key", http_client=httpx.AsyncClient(
        base_url="http://lethe", transport=_answering(seen, 404, missing)))
    with pytest.raises(LetheAPIError) as caught:
        await lethe.forget_fact("m1", "api_9")
    assert (caught.value.status, caught.value.type, caught.value.field, len(seen)) == (404, "not_found", "fact_id", 1)
