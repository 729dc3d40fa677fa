"""The context windows of well-known models, in their tokens, so that a request is never planned past the window
of the model it goes to (a 200k ceiling would overflow a 128k model).

Only the input side counts: where a model's output shares the window, its window here is what it takes in.
Names are matched as `engine.ceilings.match_model` does, so a dated version takes its family's entry.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["KNOWN_CONTEXT_WINDOWS"]

KNOWN_CONTEXT_WINDOWS = MappingProxyType({
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-5": 272_000,
    "gpt-5-mini": 272_000,
    "gpt-5-nano": 272_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "llama-3.1": 128_000,
    "llama-3.3": 128_000,
    "mistral-large": 128_000,
})
