"""The markdown summary of the latest results under bench/results/: the figures and each target, met or not.

    .venv/bin/python bench/summary.py      # rewrites bench/results/summary.md from the JSON files there
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["write_summary"]

PLOTS = ["hot_path.png", "side_by_side.png", "cost.png", "week.png"]


def _load(results: Path, name: str) -> Any:
    path = results / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _mark(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def _hot(hot: dict[str, Any], lines: list[str], targets: list[tuple[str, str, bool | None]]) -> None:
    lines += ["## Hot path against memory size (server time, ms)", "",
              "| ceiling | stored messages | episodes | grown in | decorate p50 | p90 | p99 | max | report p50 | "
              "report p99 | turn, client p50 | lane caught up before timing |", "|" + "---|" * 12]
    for r in hot["rows"]:
        d, p = r["decorate_ms"], r["report_ms"]
        lines.append(f"| {r['ceiling'] // 1000}k | {r['stored_messages']:,} | {r['episodes']:,} | "
                     f"{r['grow_seconds']} s | {d['p50']} | "
                     f"{d['p90']} | {d['p99']} | {d['max']} | {p['p50']} | {p['p99']} | "
                     f"{r['turn_client_ms']['p50']} | {'yes' if r.get('lane_caught_up') else 'no'} |")
    lines.append("")
    for ceiling, v in hot["verdict"].items():
        sizes = sorted(int(s) for s in v["p99_over_p50"])
        ratio = v["p50_ratio_largest_to_smallest"]
        targets.append((f"decorate p50 at {sizes[-1]:,} at most 1.2x p50 at {sizes[0]:,} ({int(ceiling) // 1000}k "
                        "ceiling)", f"{ratio}x", ratio <= 1.2 if sizes[-1] >= 100_000 else None))
        worst = max(v["p99_over_p50"].values())
        targets.append((f"decorate p99 at most 3x p50 at every size ({int(ceiling) // 1000}k ceiling)",
                        ", ".join(f"{int(s):,}: {x}x" for s, x in v["p99_over_p50"].items()), worst <= 3))


def write_summary(results: Path) -> str:
    suite, hot, side = _load(results, "suite"), _load(results, "hot_path"), _load(results, "side_by_side")
    thr, cost, week = _load(results, "throughput"), _load(results, "cost"), _load(results, "week")
    lines: list[str] = ["# Lethe benchmarks", ""]
    targets: list[tuple[str, str, bool | None]] = []
    if suite:
        m = suite["machine"]
        lines += [f"Run `{suite['mode']}` of {suite['started_at']}, {suite.get('seconds', '?')} s, on {m['cpus']} "
                  f"cores ({m['cpu_model']}), {m['memory_gb']} GB, Python {m['python']}, {m['system']}; load "
                  f"average at the start {m['load_average_at_start']}"
                  + (" (other work was running: figures are noisy)." if m["load_average_at_start"][0] > m["cpus"] / 2
                     else " (nothing else running)."), ""]
        if suite["mode"] == "quick":
            lines += [f"Quick mode: 1k and 10k stored messages only, a {suite['plan']['cost_tokens']:,}-token "
                      "conversation for cost (not 1M), shorter runs. `make bench` runs the full sizes.", ""]
            plots = all((results / p).exists() for p in PLOTS)
            targets.append(("`make bench-quick` under 5 minutes, writing every plot",
                            f"{suite.get('seconds', 0):.0f} s, plots {'all written' if plots else 'missing'}",
                            suite.get("seconds", 1e9) < 300 and plots))
    if hot:
        _hot(hot, lines, targets)
    if side:
        lines += ["## Per turn, same conversation: Lethe vs mem0 vs the floor (ms)", "",
                  f"{side['turns']} turns after {side['warmup']} of warm-up, interleaved; Lethe with "
                  f"`{side['recall_setting']}` at a {side.get('ceiling') or 'default'} ceiling, "
                  + (f"{side['pause_seconds']} s between a reply and the next message" if side.get("pause_seconds")
                     else "turns back to back")
                  + f"; recall blocks by how they were made: {side.get('recall_provenance')}.", "",
                  "| | p50 | p90 | p99 | max |", "|---|---|---|---|---|"]
        for name, row in side["systems"].items():
            if row:
                lines.append(f"| {name} | {row['p50']} | {row['p90']} | {row['p99']} | {row['max']} |")
        lines.append("")
        ratio = side.get("lethe_p50_over_mem0_p50")
        targets.append(("Lethe decorate+report per turn (recall on) at most mem0 search+add (p50, client side)",
                        f"{ratio}x mem0" if ratio else "mem0 not measured", None if ratio is None else ratio <= 1))
    if thr:
        pair = thr.get("pair_ms") or {}
        lines += ["## Throughput", "",
                  f"{thr['pairs']} decorate/report pairs in {thr['seconds']} s over {thr['memories']} memories at "
                  f"concurrency {thr['concurrency']}: **{thr['pairs_per_second']} pairs/s**, {thr['errors']} errors; "
                  f"pair p50 {pair.get('p50')} ms, p99 {pair.get('p99')} ms (queueing at saturation). Peak RSS: "
                  f"gateway {thr['gateway_rss_mb']} MB, worker {thr['worker_rss_mb']} MB. CPU per turn: gateway "
                  f"{thr['gateway_cpu_ms_per_turn']} ms, lane (worker, {thr['judge']}) "
                  f"**{thr['lane_cpu_ms_per_turn']} ms** (lane "
                  f"{'caught up' if thr['lane_caught_up'] else 'not caught up'} {thr['lane_catch_up_seconds']} s "
                  "after the burst).", ""]
        # The target is the throughput run's figure, as the issue defines it (the worker's CPU over the turns
        # of 200 memories). The long conversation's is shown beside it: turns of ~2,300 tokens, each embedded
        # whole for its passages and its boundaries, at about 0.27 ms a token on one core.
        targets.append(("Lane CPU per turn, embedded judge, at most 150 ms (throughput run)",
                        f"{thr['lane_cpu_ms_per_turn']} ms" + ("" if thr["lane_caught_up"] else
                                                               " so far: the lane had not caught up in "
                                                               f"{thr['lane_catch_up_seconds']:g} s, so the "
                                                               "figure is not final"),
                        thr["lane_cpu_ms_per_turn"] <= 150 and thr["lane_caught_up"]))
        long = next((r["lane"] for r in (cost or {}).get("runs", []) if r.get("lane")), None)
        if long:
            bound = not long.get("lane_quiet_before", True)
            targets.append(("(for information) lane CPU per turn over the 32k cost conversation (~2,300-token "
                            "turns: passages, fades, note asks, facts)",
                            f"{'at most ' if bound else ''}{long['lane_cpu_ms_per_turn']} ms"
                            + ("" if long["lane_caught_up"] else " (the lane had not caught up: more to come)")
                            + ("; the lane was still busy with earlier work when it began" if bound else ""),
                            None))
    if cost:
        lines += ["## Cost: input tokens sent over the conversation", "",
                  "| ceiling | turns | conversation tokens | Lethe total | full history total | truncation total | "
                  "Lethe / full | Lethe / truncation |", "|" + "---|" * 8]
        for r in cost["runs"]:
            lines.append(f"| {r['ceiling'] // 1000}k | {r['turns']} | {r['conversation_tokens_total']:,} | "
                         f"{r['lethe_total']:,} | {r['full_history_total']:,} | {r['truncation_total']:,} | "
                         f"{r['lethe_share_of_full']:.2%} | {r['lethe_share_of_truncation']:.0%} |")
            if r["ceiling"] == 32000:
                targets.append((f"32k ceiling: total input tokens under 5% of full history "
                                f"({r['conversation_tokens_total']:,}-token conversation)",
                                f"{r['lethe_share_of_full']:.2%}", r["lethe_share_of_full"] < 0.05
                                if r["conversation_tokens_total"] >= 1_000_000 else None))
        lines.append("")
    if week:
        lines += ["## One memory over a week", "",
                  f"{week['turns']} turns, {week['episodes']} episodes, markers {week['markers']}, "
                  f"{week['slept_calls']} decorates slept (ceiling {week['ceiling'] // 1000}k).", ""]
    slowest = [(r["slowest_call_ms"], f"hot path {r['ceiling'] // 1000}k/{r['size']:,}: {r.get('slowest_call')}")
               for r in (hot or {}).get("rows", [])]
    slowest += [(r["slowest_call_ms"], f"cost {r['ceiling'] // 1000}k: {r.get('slowest_call')}")
                for r in (cost or {}).get("runs", [])]
    for name, data in (("week", week), ("side by side", side)):
        if data:
            slowest.append((data["slowest_call_ms"], f"{name}: {data.get('slowest_call')}"))
    if suite and suite.get("cold_start_ms"):
        lines += ["The first decorate+report after each stack starts (the gateway's cold start: first imports and "
                  "connections) is made on a memory of its own and kept out of the figures above: "
                  + ", ".join(f"{name} {ms} ms" for name, ms in suite["cold_start_ms"].items()) + ".", ""]
    if slowest:
        worst = max(slowest)
        targets.append(("No call over 1 s (every live turn's decorate and report, fades and sleeps included)",
                        f"slowest {worst[0]} ms ({worst[1]})", worst[0] <= 1000))
    if hot:
        imports = max(r["slowest_import_ms"] for r in hot["rows"])
        targets.append(("(for information) slowest bulk-import call, up to 400 messages in one decorate",
                        f"{imports} ms", None))
    lines[2:2] = ["## Targets", "", "| target | measured | |", "|---|---|---|",
                  *[f"| {name} | {got} | {_mark(ok)} |" for name, got, ok in targets], ""]
    text = "\n".join(lines) + "\n"
    (results / "summary.md").write_text(text)
    return text


if __name__ == "__main__":
    print(write_summary(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results"))
