"""Accuracy of each graph judgment on the labelled set the tests own (`tests/fixtures/judgments.jsonl`):
same entity, restates, contradicts, updates, about; for the embedded judge, and for an OpenAI-compatible one
when a URL is given. Printed and written as JSON.

.venv/bin/python bench/judges.py [--openai-url URL --openai-model MODEL] [--out bench/results/judges.json]

Relation cases are judged once each and read per judgment: `contradicts` is right when the judge says
contradicts exactly where the label does (recall on the labelled contradictions is printed beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from providers.judge import EntityMention, FactClaim, Judge  # noqa: E402

__all__ = ["CASES", "evaluate", "load_cases", "main"]

CASES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "judgments.jsonl"
RELATIONS = ("restates", "contradicts", "updates")


def load_cases(path: Path = CASES) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _mention(raw: dict[str, Any]) -> EntityMention:
    return EntityMention(raw["name"], raw.get("context", ""), tuple(raw.get("aliases", ())))


def _claim(raw: dict[str, Any]) -> FactClaim:
    return FactClaim(raw["note"], raw.get("subject", ""), raw.get("object", ""), raw.get("milestone", False))


async def evaluate(judge: Judge, cases: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per judgment: cases, right, accuracy (and recall where a class is read out of the relation cases).

    Each pair is judged on its own, as the lane judges one new fact against the few it may touch."""
    same = [c for c in cases if c["judgment"] == "same_entity"]
    relations = [c for c in cases if c["judgment"] == "relation"]
    report: dict[str, dict[str, Any]] = {}
    right = 0
    for case in same:
        (verdict,) = await judge.judge_same_entity([(_mention(case["left"]), _mention(case["right"]))])
        right += verdict.same == case["label"]
    report["same_entity"] = _figures(right, len(same))
    predicted = []
    for case in relations:
        (verdict,) = await judge.judge_contradiction([(_claim(case["old"]), _claim(case["new"]))])
        predicted.append(verdict.relation.value)
    for name in RELATIONS:
        hits = sum((p == name) == (c["label"] == name) for p, c in zip(predicted, relations, strict=True))
        labelled = [p for p, c in zip(predicted, relations, strict=True) if c["label"] == name]
        report[name] = {**_figures(hits, len(relations)),
                        "recall": round(sum(p == name for p in labelled) / max(len(labelled), 1), 4),
                        "labelled": len(labelled)}
    retiring = {"contradicts", "updates"}
    hits = sum((p in retiring) == (c["label"] in retiring) for p, c in zip(predicted, relations, strict=True))
    report["retires"] = _figures(hits, len(relations))
    right = total = 0
    for group in (c for c in cases if c["judgment"] == "about"):
        matrix = await judge.judge_about([f for f, _ in group["facts"]], group["episodes"])
        for (_, home), row in zip(group["facts"], matrix, strict=True):
            for j, verdict in enumerate(row):
                right += verdict.about == (j == home)
                total += 1
    report["about"] = _figures(right, total)
    return report


def _figures(right: int, total: int) -> dict[str, Any]:
    return {"cases": total, "right": right, "accuracy": round(right / max(total, 1), 4)}


def _print(name: str, report: dict[str, dict[str, Any]]) -> None:
    for judgment, f in report.items():
        recall = f"  recall {f['recall']:.0%} of {f['labelled']}" if "recall" in f else ""
        print(f"{name:>8}  {judgment:<12} {f['accuracy']:6.1%}  ({f['right']}/{f['cases']}){recall}")


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    from providers.embedder import CachingEmbedder, LocalEmbedder
    from providers.local_judge import LocalJudge
    from providers.openai_judge import OpenAIJudge

    cases = load_cases()
    local = LocalJudge(CachingEmbedder(LocalEmbedder(threads=args.threads)))
    results: dict[str, Any] = {"cases": len(cases), "judges": {}}
    start = time.perf_counter()
    results["judges"]["embedded"] = await evaluate(local, cases)
    results["embedded_seconds"] = round(time.perf_counter() - start, 2)
    _print("embedded", results["judges"]["embedded"])
    if args.openai_url:
        remote = OpenAIJudge(base_url=args.openai_url, api_key=args.openai_key or "none", model=args.openai_model,
                             fallback=local)
        results["judges"]["openai"] = await evaluate(remote, cases)
        results["judges"]["openai"]["fallbacks"] = {"count": remote.fallbacks}
        _print("openai", {k: v for k, v in results["judges"]["openai"].items() if k != "fallbacks"})
        print(f"  openai  fell back to the embedded judge {remote.fallbacks} times")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openai-url", default="", help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--openai-model", default="gpt-4o-mini")
    parser.add_argument("--openai-key", default=os.environ.get("OPENAI_API_KEY", ""))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="bench/results/judges.json")
    args = parser.parse_args()
    from stack import write_result  # bench's sibling: imported here so tests can import this module

    write_result(args.out, asyncio.run(_run(args)))


if __name__ == "__main__":
    main()
