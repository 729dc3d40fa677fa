"""Every code block in README.md, docs/concepts.md and docs/integrate.md runs as written, against a real gateway.

The blocks are read from the files themselves. ```python blocks run in this project's Python and ```bash or
```sh blocks in bash (`set -euo pipefail`), each in a subprocess, a file's blocks in the order a reader meets
them, with one fresh tenant per file. Nothing in a block is rewritten: it gets the environment the docs ask the
reader to set, `LETHE_URL` and `LETHE_KEY`, and for the model `OPENAI_BASE_URL` and `OPENAI_API_KEY`, which here
name the local OpenAI-compatible upstream (tests/fake_upstream.py); the tenant's stored upstream, which the
proxy's example relies on, is the same one.

A block that cannot run in a test (`make run`, a Helm install) says so in its info string, ```bash skip-test;
`SKIPPED` below lists each such block's first line, so a new skip is a change to this file too. Fences of any
other language (plain text, JSON) are shown, not run.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from config.settings import Settings
from tests.fake_upstream import FakeUpstream, serve_fake_upstream
from tests.integration.conftest import ADMIN_TOKEN
from tests.support import free_port, serve_gateway

ROOT = Path(__file__).resolve().parents[2]
FILES = ("README.md", "docs/concepts.md", "docs/integrate.md")
RUN = {"python", "bash", "sh"}
SKIP_FLAG = "skip-test"
# The first line of every block marked skip-test, by file: set-up a test cannot (or need not) do.
SKIPPED = {
    "README.md": ["make run    # the whole stack on this machine: Postgres + pgvector, Temporal dev server and "
                  "UI, worker, gateway"],
    "docs/concepts.md": [],
    "docs/integrate.md": ["export LETHE_URL=http://localhost:8080",
                          'echo "$OPENAI_API_KEY" | lethe tenant upstream dev --base-url https://api.openai.com/v1 '
                          "--api-key-stdin"],
}
BLOCK_SECONDS = 60
UPSTREAM_KEY = "sk-docs-upstream-0123456789"
FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")


@dataclass(frozen=True)
class Block:
    file: str
    line: int  # of the opening fence, 1-based
    language: str
    flags: tuple[str, ...]
    code: str

    @property
    def runs(self) -> bool:
        return self.language in RUN and SKIP_FLAG not in self.flags

    @property
    def skipped(self) -> bool:
        return self.language in RUN and SKIP_FLAG in self.flags


def blocks(file: str) -> list[Block]:
    """The fenced blocks of `file` that start at the line's start (a fence opens and closes with ```)."""
    found: list[Block] = []
    lines = (ROOT / file).read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if lines[i].startswith("```")), None)
        assert end is not None, f"{file}:{index + 1}: a code fence that never closes"
        found.append(Block(file, index + 1, opening.group(1), tuple(opening.group(2).split()),
                           "\n".join(lines[index + 1:end]) + "\n"))
        index = end + 1
    return found


def test_skipped_blocks_are_the_listed_few() -> None:
    for file in FILES:
        assert [b.code.splitlines()[0] for b in blocks(file) if b.skipped] == SKIPPED[file], file


def test_no_runnable_language_hides_under_another_name() -> None:
    """A shell or Python block fenced as `shell`, `console` or `py` would silently never run."""
    for file in FILES:
        odd = [f"{b.file}:{b.line} ({b.language})" for b in blocks(file)
               if b.language in {"shell", "console", "py", "python3", "zsh", "curl"}]
        assert not odd, f"fence these as python or bash: {odd}"


@pytest.fixture(scope="module")
def docs_upstream() -> Iterator[FakeUpstream]:
    with serve_fake_upstream() as fake:
        yield fake


@pytest.fixture(scope="module")
async def docs_gateway(settings: Settings, worker: None) -> AsyncIterator[str]:
    """A gateway of its own that can store a tenant's upstream key (it has a secret key)."""
    own = settings.replace(port=free_port(), secret_key=SecretStr("docs-blocks-secret"))
    async with serve_gateway(own) as url:
        yield url


async def _tenant_with_upstream(gateway: str, upstream: FakeUpstream) -> str:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as http:
        created = await http.post("/v1/admin/tenants", json={"name": f"docs-blocks-{uuid.uuid4().hex}"}, headers=admin)
        assert created.status_code == 201, created.text
        tenant_id, key = created.json()["tenant_id"], created.json()["api_key"]
        stored = await http.put(f"/v1/admin/tenants/{tenant_id}/upstream", headers=admin,
                                json={"base_url": upstream.base_url, "api_key": UPSTREAM_KEY})
        assert stored.status_code == 200, stored.text
    return key


async def _run(block: Block, env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    if block.language == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    process = await asyncio.create_subprocess_exec(*command, env=env, cwd=cwd, stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(process.communicate(), BLOCK_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"{block.file}:{block.line}: still running after {BLOCK_SECONDS} s") from None
    return process.returncode or 0, out.decode(), err.decode()


@pytest.mark.parametrize("file", FILES)
async def test_every_block_runs_against_the_gateway(
    file: str, docs_gateway: str, docs_upstream: FakeUpstream, tmp_path: Path,
) -> None:
    runnable = [b for b in blocks(file) if b.runs]
    assert runnable, f"{file} has no block to run"
    if any(b.language != "python" for b in runnable):
        missing = [tool for tool in ("curl", "jq") if shutil.which(tool) is None]
        if missing:
            pytest.skip(f"{file}'s shell blocks need {', '.join(missing)}, not on this machine")
    key = await _tenant_with_upstream(docs_gateway, docs_upstream)
    env = {**os.environ, "LETHE_URL": docs_gateway, "LETHE_KEY": key,
           "OPENAI_BASE_URL": docs_upstream.base_url, "OPENAI_API_KEY": UPSTREAM_KEY,
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    for block in runnable:
        code, out, err = await _run(block, env, tmp_path)
        where = f"{block.file}:{block.line} ({block.language})"
        assert code == 0, f"{where} exited {code}\n--- stdout\n{out}\n--- stderr\n{err}"
        # curl -s exits 0 on an error answer: the gateway's errors are JSON {"error": ...}.
        assert '"error"' not in out, f"{where} printed an error answer\n{out}"
    async with httpx.AsyncClient(base_url=docs_gateway, timeout=30) as http:
        listed = await http.get("/v1/memories", headers={"Authorization": f"Bearer {key}"})
    memories = listed.json()["memories"]
    assert memories and all(m["messages"] > 0 for m in memories), memories
