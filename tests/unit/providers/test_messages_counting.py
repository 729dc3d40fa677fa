"""Counting an Anthropic Messages request: its top-level `system`, tool results by their content (an image at an
image's price, not its base64), and the provider's usage with its prompt cache's tokens added."""

from __future__ import annotations

from providers.tokens import TiktokenCounter
from service.shapes import usage_input_tokens

PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUFB" * 50_000}}


def test_system_counts_whether_string_or_blocks() -> None:
    counter = TiktokenCounter()
    bare = counter.count_request({"model": "claude-test", "messages": [{"role": "user", "content": "Hi"}]})
    text = "You help with tickets, briefly, and always name the owner of each one."
    as_string = counter.count_request({"model": "claude-test", "system": text,
                                       "messages": [{"role": "user", "content": "Hi"}]})
    as_blocks = counter.count_request({"model": "claude-test", "system": [{"type": "text", "text": text}],
                                       "messages": [{"role": "user", "content": "Hi"}]})
    assert as_string == as_blocks > bare + counter.count_text(text)


def test_a_tool_result_counts_its_content_and_images_at_their_price() -> None:
    counter = TiktokenCounter()
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                           "content": [{"type": "text", "text": "Screenshot:"}, PNG]}]}
    tokens = counter.count_request({"model": "claude-test", "messages": [result]})
    assert 85 < tokens < 200  # not the 200,000 characters of base64


def test_usage_adds_the_prompt_cache_to_the_input() -> None:
    usage = {"input_tokens": 12, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 88,
             "output_tokens": 40}
    assert usage_input_tokens({"usage": usage}) == 1000
    assert usage_input_tokens({"usage": {"input_tokens": 12, "cache_creation_input_tokens": None}}) == 12
    assert usage_input_tokens({"usage": {"prompt_tokens": 30, "completion_tokens": 2}}) == 30
