"""Once against a real local model: Gemma 3 270M served by xllamacpp, answering the openai SDK.

A model this small cannot do the judgment inside its budget; the point is that whatever a real server sends,
the judge falls back cleanly to the embedded judge's answer.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openai_fake import free_port

from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from providers.usage import InMemoryUsageSink, UsageScope

PAIRS = [
    ("We will raise prices by 10% next quarter.", "We will not raise prices next quarter."),
    ("The checkout migration is 40% done.", "The checkout migration is 70% done."),
    ("The pricing page launches on 2026-03-14.", "Launch of the pricing page is on 2026-03-14."),
    ("Legal approved the refund line.", "Legal rejected the refund line."),
    ("We have 120 beta signups.", "We have 450 beta signups."),
    ("Dana owns the checkout migration.", "The office coffee machine is broken."),
]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    workdir = tmp_path_factory.mktemp("gemma")
    script = Path(__file__).parent / "llama_server.py"
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"xllamacpp server exited with {process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("xllamacpp server did not become healthy in 90 s")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_real_small_model_falls_back_to_the_embedded_judge(
    llama_server: str, local_judge: LocalJudge
) -> None:
    sink = InMemoryUsageSink()
    judge = OpenAIJudge(
        base_url=llama_server,
        api_key=None,
        model="gemma-3-270m",
        fallback=local_judge,
        timeout_seconds=60,
        max_retries=0,
        usage_sink=sink,
    )
    verdicts = await judge.judge_contradiction(PAIRS, scope=UsageScope("t1", "m1"))
    assert verdicts == await local_judge.judge_contradiction(PAIRS)
    assert judge.fallbacks == 1
    # The server answered (its tokens were counted) before its answer was refused.
    assert sink.records and sink.records[0].completion_tokens > 0
