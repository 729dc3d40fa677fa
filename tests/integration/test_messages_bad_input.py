"""Anthropic Messages bodies that decorate and report refuse: a 4xx naming the field, in Lethe's error format,
and nothing stored."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from config.settings import Settings

USER = {"role": "user", "content": "Look up LTH-7."}
CALL = {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                         {"type": "tool_use", "id": "toolu_1", "name": "lookup",
                                          "input": {"query": "LTH-7"}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "open"}]}
SYSTEM = [{"type": "text", "text": "You help with tickets.", "cache_control": {"type": "ephemeral"}}]


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _body(messages: list[Any], **fields: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 256, "system": SYSTEM, "messages": messages, **fields}


BAD_REQUESTS = [
    ("messages[0].content", _body([{"role": "user", "content": 5}])),
    ("messages[0].role", _body([{"role": "system", "content": "Be brief."}, USER])),
    ("messages[1].role", _body([USER, {"role": "tool", "content": "open"}])),
    ("system", _body([USER], system=5)),
    ("system[0].text", _body([USER], system=[{"type": "text", "text": 7}])),
    ("messages[0].content[0].text", _body([{"role": "user", "content": [{"type": "text", "text": None}]}])),
    ("messages[0].content[1].source", _body([{"role": "user", "content": [
        {"type": "text", "text": "What is this?"}, {"type": "image"}]}])),
    ("messages[1].content[0].input", _body([USER, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": "LTH-7"}]}])),
    ("messages[1].content[0].id", _body([USER, {"role": "assistant", "content": [
        {"type": "tool_use", "name": "lookup", "input": {}}]}])),
    ("messages[0].content[0].tool_use_id", _body([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "open"}]}])),
    ("messages[2].content[0].tool_use_id", _body([USER, {"role": "assistant", "content": "Sure."}, RESULT])),
    ("messages[0].content[0].content", _body([{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": 3}]}])),
    ("tools[0].name", _body([USER], tools=[{"description": "no name", "input_schema": {"type": "object"}}])),
    ("messages", _body([])),
]


@pytest.mark.parametrize(("field", "body"), BAD_REQUESTS, ids=[field for field, _ in BAD_REQUESTS])
async def test_decorate_refuses_a_bad_messages_request_naming_the_field(
    http: httpx.AsyncClient, tenant: tuple[str, str], field: str, body: dict[str, Any],
) -> None:
    # Named a Messages request: a system or tool message would otherwise make it a Chat Completions one.
    answer = await http.post("/v1/memories/bad-messages/decorate", json=body,
                             headers={**_auth(tenant[1]), "X-Lethe-Shape": "messages"})
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert error["field"] == field, error
    assert error["type"] and error["message"]
    # Nothing stored: the memory does not even exist.
    assert (await http.get("/v1/memories/bad-messages", headers=_auth(tenant[1]))).status_code == 404


async def test_decorate_refuses_huge_messages_bodies(
    http: httpx.AsyncClient, tenant: tuple[str, str], settings: Settings,
) -> None:
    # A text block the ceiling cannot hold, and an image past the body limit: 413 each, naming the field.
    huge_text = _body([{"role": "user", "content": [{"type": "text", "text": "ledger entry " * 150_000}]}])
    answer = await http.post("/v1/memories/huge-messages/decorate", json=huge_text, headers=_auth(tenant[1]))
    assert answer.status_code == 413, answer.text
    assert answer.json()["error"]["type"] == "over_ceiling"
    assert answer.json()["error"]["field"] == "messages"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "A" * (settings.limits.max_body_bytes + 10)}}
    answer = await http.post("/v1/memories/huge-messages/decorate", headers=_auth(tenant[1]),
                             json=_body([{"role": "user", "content": [image]}]))
    assert answer.status_code == 413, answer.text
    assert answer.json()["error"]["field"] == "body"
    assert (await http.get("/v1/memories/huge-messages", headers=_auth(tenant[1]))).status_code == 404


def _reply(**fields: Any) -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "It is open."}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 40, "output_tokens": 5, "cache_read_input_tokens": 10}, **fields}


BAD_REPLIES = [
    ("response.content", _reply(content="It is open.")),
    ("response.content[0].id", _reply(content=[{"type": "tool_use", "name": "lookup", "input": {}}])),
    ("response.content[0].text", _reply(content=[{"type": "text", "text": ["open"]}])),
    ("response.content[1].input", _reply(content=[{"type": "text", "text": "Noting."},
                                                  {"type": "tool_use", "id": "toolu_n", "name": "note",
                                                   "input": "[]"}])),
    ("response.role", _reply(role="user")),
    ("response.usage.input_tokens", _reply(usage={"input_tokens": -1, "output_tokens": 5})),
    ("response.usage.cache_read_input_tokens", _reply(usage={"input_tokens": 1, "cache_read_input_tokens": "9"})),
    ("response.content", _reply(choices=[{"message": {"role": "assistant", "content": "open"}}])),
]


async def test_report_refuses_bad_messages_replies_naming_the_field(
    http: httpx.AsyncClient, tenant: tuple[str, str],
) -> None:
    auth = _auth(tenant[1])
    decorated = await http.post("/v1/memories/bad-replies/decorate", json=_body([USER, CALL, RESULT]), headers=auth)
    assert decorated.status_code == 200, decorated.text
    assert decorated.json()["shape"] == "messages"
    decorate_id = decorated.json()["decorate_id"]
    before = json.loads((await http.get("/v1/memories/bad-replies/export", headers=auth)).text)
    for field, reply in BAD_REPLIES:
        answer = await http.post("/v1/memories/bad-replies/report", headers=auth,
                                 json={"decorate_id": decorate_id, "response": reply})
        assert answer.status_code == 422, (field, answer.text)
        assert answer.json()["error"]["field"] == field, (field, answer.json())
    after = json.loads((await http.get("/v1/memories/bad-replies/export", headers=auth)).text)
    assert after["messages"] == before["messages"] and after["note_calls"] == before["note_calls"] == []
    # Still unreported: a good reply is taken, and its cache reads count towards the provider's size.
    good = await http.post("/v1/memories/bad-replies/report", headers=auth,
                           json={"decorate_id": decorate_id, "response": _reply()})
    assert good.status_code == 200, good.text
    assert good.json() == {"response": _reply(), "needs_continuation": False}


async def test_decorate_takes_a_result_for_a_call_the_memory_holds(
    http: httpx.AsyncClient, tenant: tuple[str, str],
) -> None:
    # An agent may send only what is new: the call it answers came in an earlier request.
    auth = _auth(tenant[1])
    first = await http.post("/v1/memories/only-new/decorate", json=_body([USER]), headers=auth)
    reply = _reply(content=CALL["content"], stop_reason="tool_use")
    await http.post("/v1/memories/only-new/report", headers=auth,
                    json={"decorate_id": first.json()["decorate_id"], "response": reply})
    second = await http.post("/v1/memories/only-new/decorate", json=_body([RESULT]), headers=auth)
    assert second.status_code == 200, second.text
    sent = second.json()["request"]
    assert sent["messages"] == [USER, {"role": "assistant", "content": CALL["content"]}, RESULT]
    assert sent["system"][0] == SYSTEM[0]
    # Without a system or Anthropic's blocks a request looks like Chat's: X-Lethe-Shape says what it is.
    plain = {"model": "claude-test", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
    named = await http.post("/v1/memories/only-new-2/decorate", json=plain,
                            headers={**auth, "X-Lethe-Shape": "messages"})
    assert named.status_code == 200 and named.json()["shape"] == "messages", named.text
    wrong = await http.post("/v1/memories/only-new-3/decorate", json=plain, headers={**auth, "X-Lethe-Shape": "x"})
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "X-Lethe-Shape"
