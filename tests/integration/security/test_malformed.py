"""Malformed requests across every endpoint: each refused with its status and the field at fault, and none of
them changes a byte of the memory it aimed at."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from store.db import Database
from tests.integration.conftest import ADMIN_TOKEN
from tests.integration.workflows.lane_support import lane_idle

MEMORY = "keep"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Where is the launch checklist?"}]}
REPLY = {"choices": [{"message": {"role": "assistant", "content": "In the wiki."}}]}
DEEP = "[" * 100 + "]" * 100
VERY_DEEP = "[" * 100_000 + "]" * 100_000


@dataclass(frozen=True)
class Bad:
    """One malformed request: what is sent, the status expected, and the field the error must name."""

    name: str
    method: str
    path: str
    status: int
    field: str | None
    body: Any = None  # a str is sent as it is (not valid JSON, say); anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)
    auth: str = "tenant"  # "tenant", "admin", "none", or a literal Authorization header value
    prefix: bool = False  # the field only has to start with `field` (deep paths)


def _chat(**changes: Any) -> str:
    return json.dumps({**CHAT, **changes})


def _msg(**message: Any) -> str:
    return json.dumps({**CHAT, "messages": [message]})


def _report(response: Any, decorate_id: str = "{decorate_id}") -> str:
    return json.dumps({"decorate_id": decorate_id, "response": response})


def _reply_message(**message: Any) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": "ok", **message}}]}


D = f"/v1/memories/{MEMORY}/decorate"
R = f"/v1/memories/{MEMORY}/report"
S = f"/v1/memories/{MEMORY}"
E = f"/v1/memories/{MEMORY}/export"
T = "/v1/admin/tenants"

CASES = [
    # decorate: the body
    Bad("not json", "POST", D, 422, "body", "{"),
    Bad("json array", "POST", D, 422, "body", "[]"),
    Bad("json string", "POST", D, 422, "body", '"hello"'),
    Bad("raw NUL byte", "POST", D, 422, "body", '{"model": "m\x00"}'),
    Bad("NaN passed through", "POST", D, 422, "body", _chat()[:-1] + ', "temperature": NaN}'),
    Bad("Infinity", "POST", D, 422, "body", _chat()[:-1] + ', "temperature": Infinity}'),
    Bad("-Infinity", "POST", D, 422, "body", _chat()[:-1] + ', "top_p": -Infinity}'),
    Bad("number overflowing to inf", "POST", D, 422, "body", _chat()[:-1] + ', "temperature": 1e999}'),
    Bad("lone surrogate in content", "POST", D, 422, "messages[0].content",
        '{"model": "m", "messages": [{"role": "user", "content": "a\\ud800b"}]}'),
    Bad("lone low surrogate in a key", "POST", D, 422, "metadata",
        _chat()[:-1] + ', "metadata": {"k\\udc00": 1}}'),
    Bad("nesting past the limit", "POST", D, 422, "metadata", _chat()[:-1] + f', "metadata": {DEEP}}}', prefix=True),
    Bad("nesting past the parser", "POST", D, 422, "body", VERY_DEEP),
    Bad("model missing", "POST", D, 422, "model", json.dumps({"messages": CHAT["messages"]})),
    Bad("model empty", "POST", D, 422, "model", _chat(model="")),
    Bad("model a number", "POST", D, 422, "model", _chat(model=4)),
    Bad("model too long", "POST", D, 422, "model", _chat(model="m" * 201)),
    Bad("messages missing", "POST", D, 422, "messages", json.dumps({"model": "m"})),
    Bad("messages empty", "POST", D, 422, "messages", _chat(messages=[])),
    Bad("messages an object", "POST", D, 422, "messages", _chat(messages={"role": "user"})),
    Bad("message a string", "POST", D, 422, "messages[0]", _chat(messages=["hi"])),
    Bad("role unknown", "POST", D, 422, "messages[0].role", _msg(role="wizard", content="hi")),
    Bad("role missing", "POST", D, 422, "messages[0].role", _msg(content="hi")),
    Bad("role NUL", "POST", D, 422, "messages[0].role", _msg(role="user\x00", content="hi")),
    Bad("content a number", "POST", D, 422, "messages[0].content", _msg(role="user", content=7)),
    Bad("tool_calls a string", "POST", D, 422, "messages[0].tool_calls",
        _msg(role="assistant", content=None, tool_calls="call")),
    Bad("tool_call_id empty", "POST", D, 422, "messages[0].tool_call_id",
        _msg(role="tool", content="x", tool_call_id="")),
    Bad("messages and input", "POST", D, 422, "input", _chat(input="hi")),
    Bad("input empty", "POST", D, 422, "input", json.dumps({"model": "m", "input": ""})),
    Bad("input a number", "POST", D, 422, "input", json.dumps({"model": "m", "input": 3})),
    Bad("input item a string", "POST", D, 422, "input", json.dumps({"model": "m", "input": ["hi"]}), prefix=True),
    Bad("input item type a list", "POST", D, 422, "input[0]",
        json.dumps({"model": "m", "input": [{"type": [], "role": "user"}]}), prefix=True),
    Bad("input call_id too long", "POST", D, 422, "input[0]",
        json.dumps({"model": "m", "input": [{"type": "function_call_output", "call_id": "c" * 300}]}), prefix=True),
    # decorate: headers and path
    Bad("clock not a time", "POST", D, 422, "X-Lethe-Now", _chat(), {"X-Lethe-Now": "soon"}),
    Bad("clock year 1", "POST", D, 422, "X-Lethe-Now", _chat(), {"X-Lethe-Now": "0001-01-01T00:00:00+01:00"}),
    Bad("clock year 9999", "POST", D, 422, "X-Lethe-Now", _chat(), {"X-Lethe-Now": "9999-12-31T23:59:59Z"}),
    Bad("clock without zone", "POST", D, 422, "X-Lethe-Now", _chat(), {"X-Lethe-Now": "2031-01-01T00:00:00"}),
    Bad("clock backwards", "POST", D, 422, "X-Lethe-Now", _chat(), {"X-Lethe-Now": "2030-06-01T00:00:00Z"}),
    Bad("memory id too long", "POST", f"/v1/memories/{'m' * 129}/decorate", 422, "memory_id", _chat()),
    Bad("memory id with a space", "POST", "/v1/memories/a%20b/decorate", 422, "memory_id", _chat()),
    Bad("memory id with NUL", "POST", "/v1/memories/a%00b/decorate", 422, "memory_id", _chat()),
    Bad("idempotency key too long", "POST", D, 422, "Idempotency-Key", _chat(), {"Idempotency-Key": "k" * 201}),
    Bad("no key", "POST", D, 401, None, _chat(), auth="none"),
    Bad("not bearer", "POST", D, 401, None, _chat(), auth="Basic dXNlcjpwYXNz"),
    Bad("unknown key", "POST", D, 401, None, _chat(), auth="Bearer lethe_nobody"),
    # report
    Bad("report not json", "POST", R, 422, "body", "nope"),
    Bad("report an array", "POST", R, 422, "body", "[1]"),
    Bad("report decorate_id missing", "POST", R, 422, "decorate_id", json.dumps({"response": REPLY})),
    Bad("report decorate_id too long", "POST", R, 422, "decorate_id", _report(REPLY, "d" * 41)),
    Bad("report decorate_id unknown", "POST", R, 422, "decorate_id", _report(REPLY, "dec_unknown")),
    Bad("report response missing", "POST", R, 422, "response", json.dumps({"decorate_id": "{decorate_id}"})),
    Bad("report response a list", "POST", R, 422, "response", _report([REPLY])),
    Bad("choices missing", "POST", R, 422, "response.choices", _report({"id": "x"})),
    Bad("choices an object", "POST", R, 422, "response.choices", _report({"choices": {"0": {}}})),
    Bad("choices empty", "POST", R, 422, "response.choices", _report({"choices": []})),
    Bad("choice a string", "POST", R, 422, "response.choices[0]", _report({"choices": ["hi"]})),
    Bad("second choice a number", "POST", R, 422, "response.choices[1]",
        _report({"choices": [REPLY["choices"][0], 5]})),
    Bad("reply message a string", "POST", R, 422, "response.choices[0].message",
        _report({"choices": [{"message": "hi"}]})),
    Bad("message from the user", "POST", R, 422, "response.choices[0].message",
        _report({"choices": [{"message": {"role": "user", "content": "hi"}}]})),
    Bad("reply tool_calls a string", "POST", R, 422, "response.choices[0].message.tool_calls",
        _report(_reply_message(tool_calls="note"))),
    Bad("tool call a number", "POST", R, 422, "response.choices[0].message.tool_calls[0]",
        _report(_reply_message(tool_calls=[1]))),
    Bad("function a string", "POST", R, 422, "response.choices[0].message.tool_calls[0].function",
        _report(_reply_message(tool_calls=[{"id": "c1", "type": "function", "function": "note"}]))),
    Bad("arguments an object", "POST", R, 422, "response.choices[0].message.tool_calls[0].function.arguments",
        _report(_reply_message(tool_calls=[{"id": "c1", "function": {"name": "note", "arguments": {}}}]))),
    Bad("tool call id too long", "POST", R, 422, "response.choices[0].message.tool_calls[0].id",
        _report(_reply_message(tool_calls=[{"id": "c" * 300, "function": {"name": "f", "arguments": "{}"}}]))),
    Bad("NaN in the reply", "POST", R, 422, "body", _report(REPLY)[:-2] + ', "x": NaN}}'),
    Bad("surrogate in the reply", "POST", R, 422, "response.choices[0].message.content",
        '{"decorate_id": "{decorate_id}", "response": {"choices": [{"message": '
        '{"role": "assistant", "content": "\\udfff"}}]}}'),
    Bad("report to no memory", "POST", "/v1/memories/never-made/report", 404, None, _report(REPLY)),
    Bad("report bad clock", "POST", R, 422, "X-Lethe-Now", _report(REPLY), {"X-Lethe-Now": "0000-00-00"}),
    Bad("report twice", "POST", R, 409, None,
        _report({"choices": [{"message": {"role": "assistant", "content": "Other."}}]}, "{reported_id}")),
    # state, export, erase
    Bad("state bad clock", "GET", S, 422, "X-Lethe-Now", headers={"X-Lethe-Now": "yesterday"}),
    Bad("state bad id", "GET", "/v1/memories/bad%21id", 422, "memory_id"),
    Bad("state unknown", "GET", "/v1/memories/nothing-here", 404, None),
    Bad("state no key", "GET", S, 401, None, auth="none"),
    Bad("export bad id", "GET", "/v1/memories/%00/export", 422, "memory_id"),
    Bad("export unknown", "GET", "/v1/memories/nothing-here/export", 404, None),
    Bad("export unknown key", "GET", E, 401, None, auth="Bearer lethe_unknown"),
    Bad("erase bad id", "DELETE", f"/v1/memories/{'x' * 200}", 422, "memory_id"),
    Bad("erase unknown", "DELETE", "/v1/memories/nothing-here", 404, None),
    Bad("erase no key", "DELETE", S, 401, None, auth="none"),
    Bad("erase with the admin token", "DELETE", S, 401, None, auth="admin"),
    # admin
    Bad("admin no token", "POST", T, 401, None, json.dumps({"name": "x"}), auth="none"),
    Bad("admin a tenant key", "POST", T, 401, None, json.dumps({"name": "x"}), auth="tenant"),
    Bad("tenant name empty", "POST", T, 422, "name", json.dumps({"name": ""}), auth="admin"),
    Bad("tenant name blank", "POST", T, 422, "name", json.dumps({"name": "   "}), auth="admin"),
    Bad("tenant name NUL", "POST", T, 422, "name", json.dumps({"name": "acme\x00"}), auth="admin"),
    Bad("tenant name too long", "POST", T, 422, "name", json.dumps({"name": "n" * 201}), auth="admin"),
    Bad("tenant name a number", "POST", T, 422, "name", json.dumps({"name": 5}), auth="admin"),
    Bad("tenant name NaN", "POST", T, 422, "name", '{"name": NaN}', auth="admin"),
    Bad("tenant body not json", "POST", T, 422, "body", "{name", auth="admin"),
    Bad("tenant body too deep", "POST", T, 422, "body", VERY_DEEP, auth="admin"),
    Bad("tenant name taken", "POST", T, 409, None, json.dumps({"name": "{tenant_name}"}), auth="admin"),
    Bad("keys of no tenant", "POST", f"{T}/t_0000000000000000/keys", 404, None, auth="admin"),
    Bad("tenant id with NUL", "POST", f"{T}/t_%00/keys", 422, "tenant_id", auth="admin"),
    Bad("tenant id too long", "GET", f"{T}/{'t' * 41}/keys", 422, "tenant_id", auth="admin"),
    Bad("key id zero", "DELETE", f"{T}/{{tenant_id}}/keys/0", 422, "key_id", auth="admin"),
    Bad("key id a word", "DELETE", f"{T}/{{tenant_id}}/keys/abc", 422, "key_id", auth="admin"),
    Bad("key id huge", "POST", f"{T}/{{tenant_id}}/keys/99999999999999999999/rotate", 422, "key_id", auth="admin"),
    Bad("key of no tenant", "DELETE", f"{T}/{{tenant_id}}/keys/999999999", 404, None, auth="admin"),
]


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 60
    assert len({case.name for case in CASES}) == len(CASES)


async def test_malformed_requests_are_refused_naming_the_field_and_change_nothing(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    auth = {"Authorization": f"Bearer {key}"}
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    name = f"taken-{uuid.uuid4().hex}"
    assert (await http.post(T, json={"name": name}, headers=admin)).status_code == 201
    # The memory under attack: one turn at a known time, one decorate left unreported.
    clock = {"X-Lethe-Now": "2031-01-01T00:00:00Z"}
    first = (await http.post(D, json=CHAT, headers={**auth, **clock})).json()
    reported = await http.post(R, json={"decorate_id": first["decorate_id"], "response": REPLY},
                               headers={**auth, **clock})
    assert reported.status_code == 200, reported.text
    second = {**CHAT, "messages": [*CHAT["messages"], REPLY["choices"][0]["message"],
                                   {"role": "user", "content": "And the rota?"}]}
    pending = (await http.post(D, json=second, headers={**auth, **clock})).json()["decorate_id"]
    await lane_idle(db, tenant_id)  # the lane's own writes (boundary scores) are not what is measured
    before = (await http.get(E, headers=auth)).content

    fill = {"{decorate_id}": pending, "{reported_id}": first["decorate_id"], "{tenant_name}": name,
            "{tenant_id}": tenant_id}
    failures = []
    for case in CASES:
        headers = dict(case.headers)
        if case.auth == "tenant":
            headers.update(auth)
        elif case.auth == "admin":
            headers.update(admin)
        elif case.auth != "none":
            headers["Authorization"] = case.auth
        path, content = case.path, case.body
        for placeholder, value in fill.items():
            path = path.replace(placeholder, value)
            content = content.replace(placeholder, value) if isinstance(content, str) else content
        if content is not None:
            headers["Content-Type"] = "application/json"
        response = await http.request(case.method, path, content=content, headers=headers)
        got = response.json().get("error", {}) if response.headers.get("content-type") == "application/json" else {}
        named = got.get("field")
        field_ok = (named or "").startswith(case.field) if case.prefix and case.field else named == case.field
        if response.status_code != case.status or not field_ok or not got.get("message"):
            failures.append(f"{case.name}: {response.status_code} {response.text[:200]}")
    assert not failures, "\n".join(failures)

    assert (await http.get(E, headers=auth)).content == before
