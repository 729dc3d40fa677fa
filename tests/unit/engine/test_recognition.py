"""Recognising held messages: full resends, trimmed resends, deltas, and transcripts without note calls."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.recognition import (
    HeldMessage,
    agent_hash,
    content_hash,
    edited_user_message,
    new_messages_start,
    recognisable_tail,
    rehashed,
    replaced_user_message,
)


def _held(*hashes: str, optional: frozenset[str] = frozenset()) -> list[HeldMessage]:
    # Hashes starting with "u" stand for user messages: they open turns.
    return [HeldMessage(h, h in optional, h.startswith("u")) for h in hashes]


def test_content_hash_ignores_key_order() -> None:
    assert content_hash({"role": "user", "content": "a"}) == content_hash({"content": "a", "role": "user"})


def test_full_resend_starts_after_what_is_held() -> None:
    assert new_messages_start(_held("a", "b", "c"), ["a", "b", "c", "d", "e"]) == 3


def test_delta_is_all_new() -> None:
    assert new_messages_start(_held("a", "b", "c"), ["d", "e"]) == 0


def test_trimmed_resend_lines_up_in_the_middle() -> None:
    assert new_messages_start(_held("a", "b", "c", "d"), ["c", "d", "e"]) == 2


def test_transcript_without_a_note_only_reply_is_recognised() -> None:
    held = _held("u1", "note-only", "u2", "r2", optional=frozenset({"note-only"}))
    assert new_messages_start(held, ["u1", "u2", "r2", "u3"]) == 3
    assert new_messages_start(held, ["u1", "note-only", "u2", "r2", "u3"]) == 4


def test_a_repeated_message_after_new_history_is_new() -> None:
    # "ok" was said before; said again after new messages, it is a new message.
    assert new_messages_start(_held("ok", "b"), ["ok", "c"]) == 0


def test_resend_of_a_prefix_adds_nothing() -> None:
    assert new_messages_start(_held("a", "b", "c"), ["a", "b"]) == 2


def test_resend_before_the_reply_was_appended_adds_nothing() -> None:
    assert new_messages_start(_held("u1", "r1", "u2", "r2"), ["u1", "r1", "u2"]) == 3


def test_a_delta_repeating_an_old_user_message_is_new() -> None:
    # "u-ok" opened an earlier turn; sent alone after later turns, it opens a new one.
    assert new_messages_start(_held("u-ok", "r1", "u2", "r2"), ["u-ok"]) == 0


def test_the_tail_starts_at_the_turns_the_request_could_cover() -> None:
    held = _held("u1", "r1", "u2", "r2", "u3", "r3")
    assert [h.agent_hash for h in recognisable_tail(held, 2)] == ["r1", "u2", "r2", "u3", "r3"]
    assert [h.agent_hash for h in recognisable_tail(held, 0)] == ["r3"]
    assert recognisable_tail(held, 5) == held


_MESSAGES = st.sampled_from(["u1", "u2", "u3", "a", "b", "c", "n"])


@given(st.lists(_MESSAGES, max_size=14), st.lists(_MESSAGES, max_size=8))
def test_the_tail_recognises_exactly_what_the_whole_does(held_hashes: list[str], incoming: list[str]) -> None:
    held = _held(*held_hashes, optional=frozenset({"n"}))
    turns = sum(h.startswith("u") for h in incoming)
    assert new_messages_start(recognisable_tail(held, turns), incoming) == new_messages_start(held, incoming)


@given(st.lists(st.text(alphabet="abcdef", min_size=1, max_size=3), min_size=1, max_size=12, unique=True),
       st.lists(st.text(alphabet="ghij", min_size=1, max_size=3), max_size=5, unique=True),
       st.integers(min_value=0, max_value=11))
def test_any_resend_with_new_tail_keeps_exactly_the_tail(held: list[str], tail: list[str], trim: int) -> None:
    trim = min(trim, len(held) - 1)
    incoming = held[trim:] + tail
    assert incoming[new_messages_start(_held(*held), incoming):] == tail


def _message(digest: str, *, opens: bool) -> HeldMessage:
    return HeldMessage(digest, opens_turn=opens)


def test_a_request_replacing_the_last_unanswered_user_message_lines_up_without_it() -> None:
    h = _message
    history = [h(f"m{i}", opens=i % 2 == 0) for i in range(10)]  # five answered turns
    asked = [*history, h("u1", opens=True)]  # a decorate whose user message got no reply
    incoming = [f"m{i}" for i in range(10)] + ["u2"]
    assert new_messages_start(asked, incoming) == 0  # as it stands nothing lines up: all would be stored again
    assert replaced_user_message(asked, incoming) == 10  # only u2 is new, in u1's place
    # Not a replacement: the same message again, a request of new messages only, or a held reply at the end.
    assert replaced_user_message(asked, [f"m{i}" for i in range(10)] + ["u1"]) is None
    assert replaced_user_message(asked, ["u2"]) is None
    assert replaced_user_message([*history, h("r", opens=False)], incoming) is None


def test_an_edit_of_an_earlier_user_message_lines_up_with_what_came_before_it() -> None:
    h = _message
    held = [HeldMessage(f"m{i}", opens_turn=i % 2 == 0, seq=i + 1) for i in range(10)]
    incoming = ["m0", "m1", "m2", "m3", "u2-edited"]
    users = [True, False, True, False, True]
    assert new_messages_start(held, incoming) == 0
    start, edited = edited_user_message(held, incoming, users)
    assert (start, edited.seq) == (4, 5)
    # Not an edit: a resend not from the first message, a reply said otherwise, or the last message replaced.
    assert edited_user_message(held, incoming[1:], users[1:]) is None
    assert edited_user_message(held, ["m0", "m1", "m2", "other reply"], [True, False, True, False]) is None
    assert edited_user_message([*held, h("u", opens=True)], [f"m{i}" for i in range(10)] + ["v"], [True] * 11) \
        is None
    # After the edit, the branch it left is optional: the new branch's later requests line up past it.
    branched = [HeldMessage(m.agent_hash, optional=m.seq >= 5, opens_turn=m.opens_turn, seq=m.seq) for m in held]
    branched += [HeldMessage("u2-edited", opens_turn=True, seq=11), HeldMessage("a2", seq=12)]
    later = ["m0", "m1", "m2", "m3", "u2-edited", "a2", "u5"]
    tail = recognisable_tail(branched, sum(x.startswith("u") or x in ("m0", "m2") for x in later))
    assert new_messages_start(tail, later) == 6


@given(st.text(max_size=40), st.sampled_from(["user", "assistant"]))
def test_a_message_is_recognised_by_its_text_in_either_form(text: str, role: str) -> None:
    # `"content": text` and one plain text block are the same message to both APIs, so to recognition.
    as_text = {"role": role, "content": text}
    as_block = {"role": role, "content": [{"type": "text", "text": text}]}
    assert agent_hash(as_text) == agent_hash(as_block) == content_hash(as_text)
    # A block that carries more than its text (a cache mark), or two blocks, is another message.
    marked = {"role": role, "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]}
    two = {"role": role, "content": [{"type": "text", "text": text}, {"type": "text", "text": text}]}
    assert agent_hash(marked) != agent_hash(as_text) and agent_hash(two) != agent_hash(as_text)


def test_a_stored_hash_is_made_again_only_where_it_was_the_bodys_own() -> None:
    block = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert rehashed(block, content_hash(block)) == agent_hash(block) != content_hash(block)
    assert rehashed(block, "another") == "another"  # what the agent held was not the body: kept
    assert rehashed(block, None) is None  # a message only Lethe has
