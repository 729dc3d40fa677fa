"""NUL escaping for Postgres: any text, and any JSON, reads back exactly as it was written."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from store.nul import ESC, escape, json_deserializer, json_serializer, unescape

# Text rich in the two characters that matter, and in what could be mistaken for their escapes.
TEXT = st.text(alphabet=st.sampled_from(["\x00", ESC, "0", "e", "a", "\\", "u"]) | st.characters(
    blacklist_categories=("Cs",)))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


@given(TEXT)
def test_escaped_text_holds_no_nul_and_reads_back(text: str) -> None:
    stored = escape(text)
    assert "\x00" not in stored
    assert unescape(stored) == text


@given(JSON)
def test_json_reads_back_exactly_and_never_carries_a_nul_escape(value: object) -> None:
    stored = json_serializer(value)
    assert "\\u0000" not in stored.replace("\\\\", "")
    assert json_deserializer(stored) == value
    assert json.loads(json_serializer({"plain": "text"})) == {"plain": "text"}
