"""Fixtures for provider integration tests: the scripted OpenAI-compatible server and the embedded judge."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from providers.embedder import CachingEmbedder, LocalEmbedder
from providers.local_judge import LocalJudge

# The helpers sit beside the tests in a plain folder; make them importable however pytest was started.
sys.path.insert(0, str(Path(__file__).parent))
os.environ["HF_HUB_OFFLINE"] = "1"

from openai_fake import FakeOpenAI, serve_fake_openai  # noqa: E402


@pytest.fixture(scope="session")
def fake_openai() -> Iterator[FakeOpenAI]:
    with serve_fake_openai() as fake:
        yield fake


@pytest.fixture
def fake(fake_openai: FakeOpenAI) -> FakeOpenAI:
    fake_openai.plan()
    return fake_openai


@pytest.fixture(scope="session")
def local_judge() -> LocalJudge:
    return LocalJudge(CachingEmbedder(LocalEmbedder(threads=2)))
