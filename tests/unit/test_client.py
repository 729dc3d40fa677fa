"""`lethe.client`'s retries: the same Idempotency-Key on every attempt, Retry-After obeyed, bad input not retried."""

from __future__ import annotations

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
