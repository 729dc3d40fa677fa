"""Time to first token and total time through Lethe's proxy, against straight to the same upstream.

Starts `lethe dev` on free ports with a throwaway data directory and the tests' local OpenAI-compatible
upstream in a thread (it streams each event after `--event-delay-ms`), then runs one conversation both ways,
turn by turn, streamed Chat Completions over raw HTTP: straight to the upstream, then through the proxy with
the same transcript. The proxy's `Server-Timing` says how long decorate took and how long the model took to
its first event, so the overhead beyond decorate is proxy TTFT - direct TTFT - decorate (which includes the
extra network hop), and the gateway's own work is its time to the first byte less decorate and the model. Two
more rows split the rest: the model call as the gateway makes it (through the `openai` SDK, to its first event
shown), against the direct time to first token; and the hops (the agent's request reaching the gateway's app,
the first chunk coming back), the proxy's time to first token less the gateway's own time to its first byte.

    .venv/bin/python bench/proxy.py [--samples 200] [--event-delay-ms 2]

Prints p50/p99 and writes bench/results/proxy.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from hot_path import FILLER  # noqa: E402
from stack import RESULTS, running_stack  # noqa: E402
from stats import summary  # noqa: E402

from tests.fake_upstream import serve_fake_upstream  # noqa: E402


def _stream(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str]
            ) -> tuple[float, float, str, dict[str, float]]:
    """One streamed call: seconds to the first content, seconds to the end, the text, the proxy's Server-Timing
    (app: the gateway's whole time to its first byte; decorate; upstream: the model call to its first event)."""
    started = time.perf_counter()
    first, text = None, ""
    with client.stream("POST", url, json=body, headers=headers) as response:
        response.raise_for_status()
        timing = {name: float(value) for name, value in re.findall(
            r"(\w+);dur=([\d.]+)", ",".join(response.headers.get_list("server-timing")))}
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    first = first or time.perf_counter()
                    text += piece
    ended = time.perf_counter()
    return ((first or ended) - started), ended - started, text, timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--event-delay-ms", type=float, default=2.0)
    args = parser.parse_args()

    rows: dict[str, list[float]] = {k: [] for k in ("direct_ttft_ms", "direct_total_ms", "proxy_ttft_ms",
                                                    "proxy_total_ms", "decorate_ms", "ttft_overhead_ms",
                                                    "ttft_overhead_beyond_decorate_ms",
                                                    "gateway_own_ms_before_first_byte",
                                                    "model_call_from_gateway_ttft_ms", "hops_ms")}
    with running_stack("lethe-bench-proxy-") as stack, serve_fake_upstream() as upstream, \
            httpx.Client(timeout=60) as client:
        url, key = stack.url, stack.key
        upstream.delay = args.event_delay_ms / 1000
        proxy_headers = {"Authorization": f"Bearer {key}", "X-Lethe-Memory": "bench-proxy",
                         "X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": "sk-bench"}
        transcript: list[dict[str, Any]] = [{"role": "system", "content": "You are a concise assistant."}]
        for turn in range(args.warmup + args.samples):
            transcript.append({"role": "user", "content": f"Turn {turn}: where does LTH-{turn} stand? "
                                                          + FILLER * 2})
            body = {"model": "gpt-4o-mini", "messages": transcript, "stream": True}
            d_first, d_total, _, _ = _stream(client, f"{upstream.base_url}/chat/completions", body,
                                             {"Authorization": "Bearer sk-bench"})
            p_first, p_total, text, timing = _stream(client, f"{url}/v1/chat/completions", body, proxy_headers)
            decorate_ms = timing.get("decorate")
            transcript.append({"role": "assistant", "content": text})
            if turn < args.warmup or decorate_ms is None:
                continue
            rows["direct_ttft_ms"].append(d_first * 1000)
            rows["direct_total_ms"].append(d_total * 1000)
            rows["proxy_ttft_ms"].append(p_first * 1000)
            rows["proxy_total_ms"].append(p_total * 1000)
            rows["decorate_ms"].append(decorate_ms)
            rows["ttft_overhead_ms"].append((p_first - d_first) * 1000)
            rows["ttft_overhead_beyond_decorate_ms"].append((p_first - d_first) * 1000 - decorate_ms)
            # What the gateway spent itself: its time to the first byte less decorate and the model's wait.
            rows["gateway_own_ms_before_first_byte"].append(timing["app"] - decorate_ms - timing["upstream"])
            # The same model call as the gateway makes it (through the SDK), to its first event shown.
            rows["model_call_from_gateway_ttft_ms"].append(timing["upstream"])
            # The rest: the agent's request to the gateway and the first chunk back, outside the app's own time.
            rows["hops_ms"].append(p_first * 1000 - timing["app"])

    results: dict[str, Any] = {"samples": args.samples, "event_delay_ms": args.event_delay_ms,
                               "machine": {"cpus": os.cpu_count()},
                               **{name: summary(values) for name, values in rows.items()}}
    for name in rows:
        row = results[name]
        print(f"{name:<34} p50 {row['p50']:>8} ms   p99 {row['p99']:>8} ms")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "proxy.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
