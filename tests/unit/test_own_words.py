"""The seeds are a specification, not text: no tracked file repeats a run of twelve of their words."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"
RUN = 12
# Not prose: the lock, binary assets, the embedded model's vocabulary.
SKIPPED = re.compile(r"(\.lock|\.png|\.onnx)$|^providers/models/")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds live beside the project's checkout, in ../shared/seeds")
def test_no_tracked_file_repeats_twelve_words_of_a_seed() -> None:
    seeds: set[tuple[str, ...]] = set()
    for seed in SEEDS.glob("*.txt"):
        seeds |= _runs(seed.read_text(errors="replace"))
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    found = {}
    for name in tracked.split():
        path = ROOT / name
        if SKIPPED.search(name) or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if shared := _runs(text) & seeds:
            found[name] = " ".join(sorted(shared)[0])
    assert found == {}, f"seed wording repeated (a run of {RUN} words each): {found}"
