"""The suite's plots, drawn with matplotlib's Agg backend (files only, no display)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["main", "plot_cost", "plot_hot_path", "plot_side_by_side", "plot_week"]


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ceiling_label(ceiling: int) -> str:
    return f"ceiling {ceiling // 1000}k" + (" (default)" if ceiling == 200_000 else "")


def plot_hot_path(rows: list[dict[str, Any]], path: Path) -> None:
    """Decorate's server time (p50, p99, max) against stored messages, both axes log, one colour per ceiling."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for colour, ceiling in zip(("tab:blue", "tab:orange"), sorted({r["ceiling"] for r in rows}), strict=False):
        mine = sorted((r for r in rows if r["ceiling"] == ceiling), key=lambda r: r["stored_messages"])
        sizes = [r["stored_messages"] for r in mine]
        for stat, style in (("p50", "-o"), ("p99", "--s"), ("max", ":^")):
            ax.plot(sizes, [r["decorate_ms"][stat] for r in mine], style, color=colour,
                    label=f"decorate {stat}, {_ceiling_label(ceiling)}")
        ax.plot(sizes, [r["report_ms"]["p50"] for r in mine], "-.x", color=colour, alpha=0.5,
                label=f"report p50, {_ceiling_label(ceiling)}")
    ax.axhline(1000, color="red", lw=0.8, alpha=0.6)
    ax.text(ax.get_xlim()[0] if ax.get_xlim()[0] > 0 else 1000, 1000, " 1 s", color="red", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("stored messages in the memory")
    ax.set_ylabel("server time per call (ms)")
    ax.set_title("Hot path against memory size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    _save(fig, path)


def plot_cost(runs: list[dict[str, Any]], path: Path) -> None:
    """Input tokens per turn over the conversation: Lethe at each ceiling, the full history, truncation."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for colour, run in zip(("tab:blue", "tab:orange"), runs, strict=False):
        seen = run["conversation_tokens"]
        ax.plot(seen, run["truncation_per_turn"], ":", color=colour, lw=2,
                label=f"truncation to {_ceiling_label(run['ceiling'])}")
        ax.plot(seen, run["lethe_per_turn"], "-", color=colour, label=f"Lethe, {_ceiling_label(run['ceiling'])}")
    if runs:  # drawn last, dashed, so it shows where Lethe sends the same
        ax.plot(runs[0]["conversation_tokens"], runs[0]["full_history_per_turn"], "--", color="black", lw=1.2,
                label="full history each turn", zorder=5)
    ax.set_yscale("log")
    ax.set_xlabel("conversation so far (tokens)")
    ax.set_ylabel("input tokens sent this turn")
    ax.set_title("Input tokens per turn over the conversation")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def plot_week(answer: dict[str, Any], path: Path) -> None:
    """One line per episode (activation against time), fades and sleeps as vertical lines, one colour each."""
    times = [datetime.fromisoformat(t) for t in answer["times"]]
    fig, ax = plt.subplots(figsize=(10, 5))
    cmap = plt.get_cmap("viridis")
    episodes = answer["episodes"]
    for i, episode in enumerate(episodes):
        points = [(t, v) for t, v in zip(times, episode["activation"], strict=True) if v is not None]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], color=cmap(i / max(1, len(episodes) - 1)),
                    lw=1.1, alpha=0.85)
    styles = {"fade": ("tab:red", "--"), "sleep": ("tab:purple", "-"), "ceiling": ("black", ":")}
    labelled: set[str] = set()
    for mark in answer["markers"]:
        colour, style = styles.get(mark["reason"], ("grey", "-."))
        names = {"fade": "fade (the context filled)", "sleep": "sleep (after 24 h of silence)",
                 "ceiling": "ceiling seal"}
        ax.axvline(datetime.fromisoformat(mark["at"]), color=colour, ls=style, lw=1,
                   label=None if mark["reason"] in labelled else names.get(mark["reason"], mark["reason"]))
        labelled.add(mark["reason"])
    ax.set_yscale("log")
    ax.set_xlabel("time (simulated week; two sessions a day, Wednesday and Saturday off)")
    ax.set_ylabel("activation (log)")
    ax.set_title(f"One memory's {len(episodes)} episodes over a week, one line each (older darker): each fades "
                 "with time,\nthe least active leave at a fade, a day of silence brings a sleep", fontsize=10)
    ax.grid(True, alpha=0.3)
    if labelled:
        ax.legend(fontsize=8, loc="lower left")
    fig.autofmt_xdate()
    _save(fig, path)


def plot_side_by_side(result: dict[str, Any], path: Path) -> None:
    """Per-turn time of each system on the same conversation: p50 bars with p99 whiskers."""
    systems = [(name, row) for name, row in result["systems"].items() if row][::-1]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    names = [name for name, _ in systems]
    p50 = [row["p50"] for _, row in systems]
    p99 = [row["p99"] for _, row in systems]
    colours = {"Lethe": "tab:blue", "mem0": "tab:orange", "floor": "tab:grey"}
    ax.barh(names, p50, color=[next((c for k, c in colours.items() if name.startswith(k)), "tab:green")
                               for name in names])
    ax.errorbar(p50, names, xerr=[[0] * len(p50), [b - a for a, b in zip(p50, p99, strict=True)]], fmt="none",
                ecolor="black", capsize=4)
    for y, value in enumerate(p50):
        ax.text(value, y, f" {value:.0f} ms", va="bottom", fontsize=8)
    ax.set_xlabel("ms per turn (bar: p50, whisker: p99)")
    ax.set_title(f"Per turn, same {result['turns']}-turn conversation, same embedder and Postgres", fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)
    plt.setp(ax.get_yticklabels(), fontsize=8)
    _save(fig, path)


def main() -> None:
    """Draw every plot again from the JSON under bench/results/ (or the directory given)."""
    import json
    import sys

    results = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results"

    def load(name: str) -> Any:
        path = results / f"{name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    if (hot := load("hot_path")) is not None:
        plot_hot_path(hot["rows"], results / "hot_path.png")
    if (cost := load("cost")) is not None:
        plot_cost(cost["runs"], results / "cost.png")
    if (week := load("week")) is not None:
        plot_week(week["activation"], results / "week.png")
    if (side := load("side_by_side")) is not None:
        plot_side_by_side(side, results / "side_by_side.png")


if __name__ == "__main__":
    main()
