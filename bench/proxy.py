"""Time to first token and total time through Lethe's proxy, against straight to the same upstream.

Starts `lethe dev` on free ports with a throwaway data directory and the tests' local upstream in a thread (it
speaks OpenAI's and Anthropic's shapes and streams each event after `--event-delay-ms`), then for each route
(`/v1/chat/completions`, and Anthropic's `/v1/messages`) runs one conversation both ways, turn by turn,
streamed over raw HTTP: straight to the upstream, then through the proxy with the same transcript. The
proxy's `Server-Timing` says how long decorate took and how long the model took to its first event, so the
overhead beyond decorate is proxy TTFT - direct TTFT - decorate (which includes the extra network hop), and
the gateway's own work is its time to the first byte less decorate and the model. Two more rows split the
rest: the model call as the gateway makes it (through the `openai` SDK, to its first event shown), against
the direct time to first token; and the hops (the agent's request reaching the gateway's app, the first chunk
coming back), the proxy's time to first token less the gateway's own time to its first byte.

    .venv/bin/python bench/proxy.py [--samples 200] [--event-delay-ms 2]

Prints p50/p99 per route side by side and writes bench/results/proxy.json (Chat Completions' rows at the top,
as before; the Messages route's under `messages`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from hot_path import FILLER  # noqa: E402
from stack import RESULTS, cpu_facts, running_stack, wait_for_lane  # noqa: E402
from stats import summary  # noqa: E402

from tests.fake_upstream import serve_fake_upstream  # noqa: E402


def _pieces(event: dict[str, Any]) -> list[str]:
    """The text an event adds: a Chat chunk's deltas, or an Anthropic `text_delta`."""
    if event.get("type") == "content_block_delta":
        return [str((event.get("delta") or {}).get("text") or "")]
    return [str((choice.get("delta") or {}).get("content") or "") for choice in event.get("choices") or []]


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
            for piece in _pieces(json.loads(line[6:])):
                if piece:
                    first = first or time.perf_counter()
                    text += piece
    ended = time.perf_counter()
    return ((first or ended) - started), ended - started, text, timing


_ROWS = ("direct_ttft_ms", "direct_total_ms", "proxy_ttft_ms", "proxy_total_ms", "decorate_ms", "ttft_overhead_ms",
         "ttft_overhead_beyond_decorate_ms", "gateway_own_ms_before_first_byte", "model_call_from_gateway_ttft_ms",
         "hops_ms")
_VERSION = {"anthropic-version": "2023-06-01"}


def _route(route: str, client: httpx.Client, url: str, key: str, upstream: Any, turns: int,
           warmup: int) -> dict[str, list[float]]:
    """One conversation on one route, both ways, turn by turn: the rows of its measures."""
    rows: dict[str, list[float]] = {k: [] for k in _ROWS}
    messages = route == "messages"
    proxy_headers = {"Authorization": f"Bearer {key}", "X-Lethe-Memory": f"bench-proxy-{route}",
                     "X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": "sk-bench",
                     **(_VERSION if messages else {})}
    direct_headers = {"x-api-key": "sk-bench", **_VERSION} if messages else {"Authorization": "Bearer sk-bench"}
    path = "/messages" if messages else "/chat/completions"
    system = "You are a concise assistant."
    transcript: list[dict[str, Any]] = [] if messages else [{"role": "system", "content": system}]
    for turn in range(warmup + turns):
        transcript.append({"role": "user", "content": f"Turn {turn}: where does LTH-{turn} stand? " + FILLER * 2})
        body: dict[str, Any] = {"model": "gpt-4o-mini", "messages": transcript, "stream": True}
        if messages:
            body = {**body, "model": "claude-bench", "system": system, "max_tokens": 512}
        d_first, d_total, _, _ = _stream(client, f"{upstream.base_url}{path}", body, direct_headers)
        p_first, p_total, text, timing = _stream(client, f"{url}/v1{path}", body, proxy_headers)
        decorate_ms = timing.get("decorate")
        transcript.append({"role": "assistant", "content": text})
        if turn < warmup or decorate_ms is None:
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
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--event-delay-ms", type=float, default=2.0)
    args = parser.parse_args()

    with running_stack("lethe-bench-proxy-") as stack, serve_fake_upstream() as upstream, \
            httpx.Client(timeout=60) as client:
        upstream.delay = args.event_delay_ms / 1000
        measured: dict[str, dict[str, list[float]]] = {}
        for route in ("chat_completions", "messages"):
            # Each route starts with the lane caught up: the first route's lane work would otherwise run on
            # through the second's turns and take its core.
            waited = wait_for_lane(stack, timeout=600)
            print(f"  {route}: after {waited:.0f} s for the lane to go quiet", flush=True)
            measured[route] = _route(route, client, stack.url, stack.key, upstream, args.samples, args.warmup)

    chat = {name: summary(values) for name, values in measured["chat_completions"].items()}
    anthropic = {name: summary(values) for name, values in measured["messages"].items()}
    results: dict[str, Any] = {"samples": args.samples, "event_delay_ms": args.event_delay_ms,
                               "machine": cpu_facts(), **chat, "messages": anthropic}
    print(f"{'':<34} {'/v1/chat/completions':>30}   {'/v1/messages':>30}")
    for name in _ROWS:
        print(f"{name:<34} p50 {chat[name]['p50']:>8} ms  p99 {chat[name]['p99']:>8} ms   "
              f"p50 {anthropic[name]['p50']:>8} ms  p99 {anthropic[name]['p99']:>8} ms")
    print(f"machine: {results['machine']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "proxy.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
