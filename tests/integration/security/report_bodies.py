"""Report bodies for the fuzz test: well-formed provider replies in both shapes, and one change to each that
either breaks it at a known field (the error must name it) or keeps it well-formed (NUL bytes, fields Lethe does
not read, nesting and sizes under the limits).

A body is built as JSON and sent as text, so a change can also be one JSON's objects cannot hold: a lone UTF-16
surrogate escape. `DECORATE` stands for the pending decorate's id, `PAD` for padding sized at send time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

DECORATE = "@@decorate@@"
LONE = "@@lone-surrogate@@"
MAX_ITEMS = 1000  # service/replies.py: MAX_REPLY_ITEMS
MAX_DEPTH = 64  # api/body.py: MAX_JSON_DEPTH
COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens")

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Case:
    """One report body and what it must get: `fields` empty for a 2xx, else the names the error may give
    (`prefix`: the error's field starts with one, for nesting found below the change)."""

    shape: str
    body: Any
    change: str
    fields: tuple[str, ...] = ()
    prefix: bool = False
    pad: int | None = None  # bytes from the body limit to pad to (negative: under it)
    status: int = 422

    def text(self, decorate_id: str, limit: int) -> bytes:
        raw = json.dumps(self.body, ensure_ascii=False).replace(DECORATE, decorate_id)
        raw = raw.replace(json.dumps(LONE), '"a\\ud800b"')
        if self.pad is not None:
            size = len(raw.encode())
            raw = raw[:-1] + ', "x_pad": "' + "p" * max(0, limit + self.pad - size - 13) + '"}'
        return raw.encode()


def field(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


# --- well-formed replies ---

# Any text but lone surrogates (those are a change of their own): NUL, U+E000 (the store's escape), emoji.
text = st.text(st.characters(codec="utf-8") | st.sampled_from(["\x00", "\ue000", "😀"]), max_size=24)
name = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
ident = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=24)
counts = st.integers(min_value=0, max_value=2**31 - 1)
# Floats a store keeps as they are (JSONB turns 1e300 into an integer's digits).
plain = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | text
         | st.floats(-1e6, 1e6).map(lambda f: round(f, 3)))
extra_json = st.recursive(plain, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(name, inner, max_size=3),
                          max_leaves=8)
extras = st.dictionaries(name.map(lambda k: f"x_{k}") | st.just("x_\x00\ue000"), extra_json, max_size=2)

note_entry = st.fixed_dictionaries({"note": text, "subject": text, "object": text},
                                   optional={"milestone": st.booleans(), "source": st.sampled_from(
                                       ["user", "assistant", "tool"])})
# What a model may put in a note call: facts, or its mistakes (answered in history with `Not recorded`).
note_arguments = st.one_of(
    st.lists(note_entry, min_size=1, max_size=3).map(lambda notes: json.dumps({"notes": notes})),
    st.sampled_from(["", "{", "not json", "[]", "5", '"notes"', "null", '{"notes": 5}', '{"notes": []}',
                     '{"notes": [{"note": 5}]}', json.dumps({"notes": [], "x": "[" * 30}),
                     json.dumps({"notes": [{"note": "n", "subject": "s", "object": "o"}],
                                 "deep": json.loads("[" * 60 + "]" * 60)})]),
    text,
)
other_arguments = text | st.just("[" * 5000 + "]" * 5000) | extra_json.map(json.dumps)


@st.composite
def tool_call(draw: Any) -> dict[str, Any]:
    note = draw(st.booleans())
    return {"id": draw(ident), "type": "function", "function": {
        "name": "note" if note else draw(name), "arguments": draw(note_arguments if note else other_arguments)},
        **draw(extras)}


part = st.one_of(
    st.builds(lambda t, x: {"type": "text", "text": t, **x}, text, extras),
    st.builds(lambda t: {"type": "refusal", "refusal": t}, text),
    st.builds(lambda k, x: {"type": f"x_{k}", **x}, name, extras),
)
usage = st.fixed_dictionaries({}, optional={
    **{count: counts | st.none() for count in COUNTS},
    "prompt_tokens_details": st.fixed_dictionaries({"cached_tokens": counts}),
    "cost": st.floats(0, 10).map(lambda f: round(f, 4)),
})


@st.composite
def chat_message(draw: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant",
                               "content": draw(st.none() | text | st.lists(part, min_size=1, max_size=3))}
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(tool_call(), min_size=1, max_size=3))
    if draw(st.booleans()):
        message["refusal"] = draw(st.none() | text)
    return {**message, **draw(extras)}


@st.composite
def chat_reply(draw: Any) -> dict[str, Any]:
    messages = draw(st.lists(chat_message(), min_size=1, max_size=3))
    reply: dict[str, Any] = {"id": "chatcmpl-fuzz", "object": "chat.completion", "model": "gpt-4o-mini",
                             "choices": [{"index": i, "message": m, "finish_reason": draw(st.sampled_from(
                                 ["stop", "tool_calls", "length", None]))} for i, m in enumerate(messages)]}
    if draw(st.booleans()):
        reply["usage"] = draw(usage | st.none())
    return {**reply, **draw(extras)}


@st.composite
def output_item(draw: Any) -> dict[str, Any]:
    kind = draw(st.sampled_from(["message", "function_call", "reasoning", "other"]))
    if kind == "message":
        item = {"type": "message", "id": draw(ident), "status": "completed", "role": "assistant",
                "content": draw(text | st.lists(part, max_size=3))}
    elif kind == "function_call":
        note = draw(st.booleans())
        item = {"type": "function_call", "id": draw(ident), "call_id": draw(ident),
                "name": "note" if note else draw(name), "arguments": draw(note_arguments if note else other_arguments)}
    elif kind == "reasoning":
        item = {"type": "reasoning", "id": draw(ident), "summary": draw(st.lists(
            st.builds(lambda t: {"type": "summary_text", "text": t}, text), max_size=2))}
    else:
        item = {"type": draw(st.sampled_from(["web_search_call", "x_unknown", "image_generation_call"])),
                "id": draw(ident), "status": "completed"}
    return {**item, **draw(extras)}


@st.composite
def responses_reply(draw: Any) -> dict[str, Any]:
    reply: dict[str, Any] = {"id": "resp_fuzz", "object": "response", "model": "gpt-4o-mini",
                             "output": draw(st.lists(output_item(), max_size=4))}
    if draw(st.booleans()):
        reply["usage"] = draw(usage | st.none())
    return {**reply, **draw(extras)}


# --- positions Lethe validates, and values wrong there ---

wrong_scalar = st.sampled_from([5, -1, 1.5, True, None, "x", [], {}, [1], {"a": 1}])


def _not(*allowed: Any) -> Any:
    """Wrong values for a position: any of `wrong_scalar` but what it allows (by type, bool apart from int)."""
    def fine(value: Any) -> bool:
        return any(type(value) is kind if isinstance(kind, type) else value == kind for kind in allowed)
    return wrong_scalar.filter(lambda v: not fine(v))


TOKENS_WRONG = st.sampled_from([-1, -(10**6), 2**31, 2**63, 10**30, 5.0, 1.5, True, False, "5", [], {"n": 1}])


def positions(shape: str, reply: dict[str, Any]) -> list[tuple[Path, Any, tuple[Path, ...]]]:
    """(path, wrong values, other paths the error may name) for every validated position of `reply`."""
    at: list[tuple[Path, Any, tuple[Path, ...]]] = []
    root: Path = ("response",)

    def parts(path: Path, content: Any) -> None:
        if not isinstance(content, list):
            return
        for k, p in enumerate(content):
            at.append(((*path, k), _not(dict), ()))
            at.append(((*path, k, "type"), _not(str) | st.sampled_from(["", "t" * 201]), ()))
            key = {"text": "text", "output_text": "text", "summary_text": "text", "refusal": "refusal"}.get(p["type"])
            if key:
                at.append(((*path, k, key), _not(str), ()))

    def usage_at() -> None:
        if isinstance(reply.get("usage"), dict):
            at.append(((*root, "usage"), _not(dict, None), ()))
            at.extend(((*root, "usage", count), TOKENS_WRONG, ()) for count in COUNTS)
            at.append(((*root, "usage", "prompt_tokens_details"), _not(dict, None), ()))

    usage_at()
    if shape == "chat_completions":
        at.append(((*root, "choices"), _not(list) | st.just([]), ()))
        for i, choice in enumerate(reply["choices"]):
            c: Path = (*root, "choices", i)
            m: Path = (*c, "message")
            at.append((c, _not(dict), ()))
            at.append(((*c, "finish_reason"), _not(str, None), ()))
            at.append(((*c, "index"), _not(int, None), ()))
            at.append((m, _not(dict) if i == 0 else _not(dict, None), ()))
            if i == 0:
                at.append(((*m, "role"), st.sampled_from(["user", "tool", "system", "", "assistant\x00", 5, None]),
                           (m,)))
            message = choice["message"]
            at.append(((*m, "content"), _not(str, list, None), ()))
            parts((*m, "content"), message.get("content"))
            at.append(((*m, "tool_calls"), _not(list, None), ()))
            for j, call in enumerate(message.get("tool_calls") or []):
                t: Path = (*m, "tool_calls", j)
                at.append((t, _not(dict), ()))
                at.append(((*t, "id"), _not(str) | st.sampled_from(["", "i" * 201]), ()))
                at.append(((*t, "type"), _not(str), ()))
                at.append(((*t, "function"), _not(dict), ()))
                at.append(((*t, "function", "name"), _not(str) | st.sampled_from(["", "n" * 201]), ()))
                at.append(((*t, "function", "arguments"), _not(str), ()))
                if call["function"]["name"] == "note":
                    at.append(((*t, "function", "arguments"), st.sampled_from(
                        ["[" * 70 + "]" * 70, "[" * 30_000, json.dumps({"notes": json.loads("[" * 80 + "]" * 80)})]),
                        ()))
    else:
        at.append(((*root, "output"), _not(list), ()))
        for i, item in enumerate(reply["output"]):
            o: Path = (*root, "output", i)
            at.append((o, _not(dict), ()))
            at.append(((*o, "type"), _not(str) | st.sampled_from(["", "t" * 201]), ()))
            if item["type"] == "message":
                at.append(((*o, "role"), st.sampled_from(["user", "system", "", 5, None]), ()))
                at.append(((*o, "content"), _not(str, list), ()))
                parts((*o, "content"), item["content"])
            elif item["type"] == "function_call":
                at.append(((*o, "call_id"), _not(str) | st.sampled_from(["", "c" * 201]), ()))
                at.append(((*o, "name"), _not(str) | st.just(""), ()))
                at.append(((*o, "arguments"), _not(str), ()))
                if item["name"] == "note":
                    at.append(((*o, "arguments"), st.sampled_from(["[" * 70 + "]" * 70, "[" * 30_000]), ()))
            elif item["type"] == "reasoning":
                at.append(((*o, "summary"), _not(list, None), ()))
                parts((*o, "summary"), item["summary"])
            else:
                at.append(((*o, "call_id"), _not(str, None) | st.just(""), ()))
    return at


def set_at(value: Any, path: Path, new: Any) -> Any:
    """A copy of `value` with `path` set to `new` (or removed, for `REMOVE`)."""
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    head = path[0]
    if len(path) == 1 and new is REMOVE:
        del copy[head]
    elif len(path) == 1:
        copy[head] = new
    else:
        copy[head] = set_at(copy[head], path[1:], new)
    return copy


REMOVE = object()


def get_at(value: Any, path: Path) -> Any:
    for part in path:
        if isinstance(value, dict) and part in value or isinstance(value, list) and isinstance(part, int):
            value = value[part]  # type: ignore[index]
        else:
            return REMOVE
    return value


def required(shape: str, body: Any, path: Path) -> bool:
    """Whether the reply must hold `path` (it does now): what a missing one must be refused for."""
    if get_at(body, path) is REMOVE:
        return False
    last = path[-1]
    if last in ("choices", "output", "id", "function", "name", "arguments", "text", "refusal", "role"):
        return True
    if last == "message":
        return path[-2] == 0  # later choices may come without one
    if last == "type":
        return "tool_calls" not in path  # a tool call's kind is `function` when not said
    if last == "content":
        return shape == "responses"
    if last == "call_id":
        return get_at(body, path[:-1]).get("type") == "function_call"
    return False


def strings(value: Any, path: Path = ()) -> list[Path]:
    """Every string's path in `value`."""
    if isinstance(value, str):
        return [path]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [p for key, child in items for p in strings(child, (*path, key))]


def containers(value: Any, path: Path = ()) -> list[Path]:
    """Every object's path in `value`."""
    if isinstance(value, dict):
        return [path, *[p for key, child in value.items() for p in containers(child, (*path, key))]]
    if isinstance(value, list):
        return [p for i, child in enumerate(value) for p in containers(child, (*path, i))]
    return []


@st.composite
def cases(draw: Any) -> Case:
    shape = draw(st.sampled_from(["chat_completions", "responses"]))
    reply = draw(chat_reply() if shape == "chat_completions" else responses_reply())
    body: dict[str, Any] = {"decorate_id": DECORATE, "response": reply}
    # Weighted by how many positions each reaches; `wrong` first, as what hypothesis draws most.
    change = draw(st.sampled_from(["wrong"] * 8 + ["none"] * 5 + ["missing", "lone"] * 3
                                  + ["deep", "report", "size"] * 2 + ["nested", "many", "shape"]))
    if change == "wrong":
        path, wrong, also = draw(st.sampled_from(positions(shape, reply)))
        return Case(shape, set_at(body, path, draw(wrong)), f"wrong {field(path)}", (field(path),
                                                                                       *map(field, also)))
    if change == "missing":
        needed = [p for p, _, _ in positions(shape, reply) if required(shape, body, p)]
        if not needed:
            return Case(shape, body, "none")
        path = draw(st.sampled_from(needed))
        also = ((*path[:-1],),) if path[-1] == "role" and "choices" in path else ()
        return Case(shape, set_at(body, path, REMOVE), f"missing {field(path)}", (field(path), *map(field, also)))
    if change == "lone":
        path = draw(st.sampled_from([p for p in strings(body) if p != ("decorate_id",)] or [("decorate_id",)]))
        return Case(shape, set_at(body, path, LONE), f"lone surrogate at {field(path)}", (field(path),))
    if change in ("deep", "nested"):
        path = draw(st.sampled_from(containers(body)))
        room = MAX_DEPTH + 1 - (len(path) + 1)  # lists that fit under the key `x_deep` at `path`
        levels = room + 1 if change == "deep" else max(room, 1)
        nest = json.loads("[" * levels + "]" * levels)
        changed = set_at(body, (*path, "x_deep"), nest)
        if change == "deep":
            return Case(shape, changed, f"too deep at {field(path)}", (field((*path, "x_deep")),), prefix=True)
        return Case(shape, changed, f"nested under the limit at {field(path)}")
    if change == "many":
        key = "choices" if shape == "chat_completions" else "output"
        least = {"message": {"role": "assistant", "content": ""}} if key == "choices" else {"type": "x"}
        items = [least] * (MAX_ITEMS + 1)
        return Case(shape, set_at(body, ("response", key), items), f"{MAX_ITEMS + 1} {key}", (f"response.{key}",))
    if change == "report":
        top, wrong = draw(st.sampled_from([
            (("decorate_id",), _not(str) | st.sampled_from(["", "d" * 41, "dec_nothing", DECORATE + "\x00",
                                                             "dec_\x00", "dec 1", "😀", REMOVE])),
            (("response",), _not(dict) | st.just(REMOVE)),
        ]))
        return Case(shape, set_at(body, top, draw(wrong)), f"report {top[0]}", (top[0],))
    if change == "shape":
        # The other shape's reply to this decorate.
        other = draw(responses_reply() if shape == "chat_completions" else chat_reply())
        return Case(shape, {**body, "response": other}, "the other shape", ("response.choices",))
    if change == "size":
        over = draw(st.booleans())
        return Case(shape, body, "over the body limit" if over else "just under the body limit",
                    ("body",) if over else (), pad=draw(st.integers(1, 64)) if over else -draw(st.integers(0, 64)),
                    status=413 if over else 422)
    return Case(shape, body, "none")
