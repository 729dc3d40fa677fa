"""Upstream errors through the proxy: status and body as the provider sent them, and a retry with the same
Idempotency-Key that stores nothing twice and loses nothing."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import openai
import pytest
from openai import AsyncOpenAI

from tests.fake_upstream import FakeUpstream
from tests.integration.proxy.agents import CHAT_TOOLS, RESPONSES_TOOLS


async def _messages(http: httpx.AsyncClient, key: str, memory_id: str) -> list[dict]:
    response = await http.get(f"/v1/memories/{memory_id}/export", headers={"Authorization": f"Bearer {key}"})
    return json.loads(response.text)["messages"] if response.status_code == 200 else []


async def _ask(client: AsyncOpenAI, shape: str, text: str, *, stream: bool, key: str) -> str:
    """One request; the answer's text, read whole (streamed or not)."""
    headers = {"Idempotency-Key": key}
    if shape == "chat_completions":
        messages = [{"role": "user", "content": text}]
        if not stream:
            answer = await client.chat.completions.create(model="m", messages=messages, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                          extra_headers=headers)
            return answer.choices[0].message.content or ""
        chunks = await client.chat.completions.create(model="m", messages=messages, tools=CHAT_TOOLS,  # type: ignore[arg-type]
                                                      stream=True, extra_headers=headers)
        return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
    if not stream:
        response = await client.responses.create(model="m", input=text, tools=RESPONSES_TOOLS,  # type: ignore[arg-type]
                                                 extra_headers=headers)
        return response.output_text
    events = await client.responses.create(model="m", input=text, tools=RESPONSES_TOOLS, stream=True,  # type: ignore[arg-type]
                                           extra_headers=headers)
    return "".join([e.delta async for e in events if e.type == "response.output_text.delta"])


def _stored_once(messages: list[dict], text: str) -> None:
    users = [m for m in messages if m["role"] == "user"]
    assert [m["body"]["content"] for m in users] == [text]  # the turn kept once
    replies = [m for m in messages if m["role"] in ("assistant", "message")]
    assert len(replies) == 1 and f"Noted: {text}" in json.dumps(replies[0]["body"])  # one whole reply


@pytest.mark.parametrize(("shape", "stream"), [("chat_completions", False), ("chat_completions", True),
                                              ("responses", True)])
async def test_429_keeps_status_retry_after_and_body(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], shape: str, stream: bool,
) -> None:
    client = agent_client(f"r429-{shape}-{stream}")
    upstream.script.append("429")
    with pytest.raises(openai.RateLimitError) as caught:
        await _ask(client, shape, "How are the invoices?", stream=stream, key="k1")
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body == {"message": "Rate limit reached for requests", "type": "requests", "param": None,
                                 "code": "rate_limit_exceeded"}
    assert await _ask(client, shape, "How are the invoices?", stream=stream, key="k1") == \
        "Noted: How are the invoices?"
    _stored_once(await _messages(http, tenant[1], f"r429-{shape}-{stream}"), "How are the invoices?")


@pytest.mark.parametrize(("step", "error"), [("400", openai.BadRequestError), ("500", openai.InternalServerError)])
async def test_400_and_500_keep_the_providers_status_and_message(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], step: str, error: type[openai.APIStatusError],
) -> None:
    client = agent_client(f"r{step}")
    upstream.script.append(step)
    with pytest.raises(error) as caught:
        await _ask(client, "chat_completions", "Close the ticket", stream=False, key="k2")
    assert caught.value.status_code == int(step)
    sent = {"400": "Invalid value for 'temperature': must be at most 2.",
            "500": "The server had an error while processing your request."}[step]
    assert caught.value.body["message"] == sent  # type: ignore[index]
    answer = await _ask(client, "chat_completions", "Close the ticket", stream=False, key="k2")
    assert answer == "Noted: Close the ticket"
    _stored_once(await _messages(http, tenant[1], f"r{step}"), "Close the ticket")


async def test_a_malformed_provider_reply_is_a_502_naming_the_field_and_stores_nothing(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str],
) -> None:
    client = agent_client("rmalformed")
    upstream.script.append("malformed")
    with pytest.raises(openai.APIStatusError) as caught:
        await _ask(client, "chat_completions", "Look up the order", stream=False, key="k5")
    assert caught.value.status_code == 502
    assert caught.value.body["type"] == "upstream_malformed"  # type: ignore[index]
    assert "tool_calls[0].id" in caught.value.body["param"]  # type: ignore[index]
    answer = await _ask(client, "chat_completions", "Look up the order", stream=False, key="k5")
    assert answer == "Noted: Look up the order"
    _stored_once(await _messages(http, tenant[1], "rmalformed"), "Look up the order")


@pytest.mark.parametrize("stream", [False, True])
async def test_timeout_is_a_retryable_error_and_the_retry_stores_nothing_twice(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], stream: bool,
) -> None:
    client = agent_client(f"hang-{stream}")
    upstream.script.append("hang")
    with pytest.raises(openai.APIStatusError) as caught:
        await _ask(client, "chat_completions", "Is the deploy done?", stream=stream, key="k3")
    assert caught.value.status_code == 504 and caught.value.body["type"] == "upstream_timeout"  # type: ignore[index]
    # The turn is kept, no reply: nothing half-stored.
    assert [m["role"] for m in await _messages(http, tenant[1], f"hang-{stream}")] == ["user"]
    answer = await _ask(client, "chat_completions", "Is the deploy done?", stream=stream, key="k3")
    assert answer == "Noted: Is the deploy done?"
    _stored_once(await _messages(http, tenant[1], f"hang-{stream}"), "Is the deploy done?")


@pytest.mark.parametrize("shape", ["chat_completions", "responses"])
async def test_mid_stream_disconnect_ends_in_an_error_and_stores_no_half_reply(
    agent_client: Callable[..., AsyncOpenAI], upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], shape: str,
) -> None:
    client = agent_client(f"drop-{shape}")
    upstream.script.append("drop")
    with pytest.raises(openai.APIError) as caught:
        await _ask(client, shape, "Summarise the outage for the status page please", stream=True, key="k4")
    assert caught.value.body["type"] == "upstream_unreachable"  # type: ignore[index]
    assert [m["role"] for m in await _messages(http, tenant[1], f"drop-{shape}")] == ["user"]
    text = "Summarise the outage for the status page please"
    assert await _ask(client, shape, text, stream=True, key="k4") == f"Noted: {text}"
    _stored_once(await _messages(http, tenant[1], f"drop-{shape}"), text)
    # A retry after success gets the first answer back and calls no one.
    calls = len(upstream.requests)
    assert await _ask(client, shape, text, stream=True, key="k4") == f"Noted: {text}"
    assert len(upstream.requests) == calls
    _stored_once(await _messages(http, tenant[1], f"drop-{shape}"), text)
