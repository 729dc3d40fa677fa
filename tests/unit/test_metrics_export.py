"""With `LETHE_OTLP_ENDPOINT` set, Lethe's metrics are pushed to the collector's `/v1/metrics` (OTLP/HTTP), and
still read on `/metrics`. In a subprocess: a process has one meter provider, and this one's belongs to the rest."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from cli.telemetry import otlp_url

ROOT = Path(__file__).resolve().parents[2]

_PUSH = """
import sys
from opentelemetry import metrics
from prometheus_client import generate_latest
from cli.telemetry import configure_metrics
from config.groups import ObservabilitySettings
from service.metrics import count_recall

configure_metrics(ObservabilitySettings(otlp_endpoint=sys.argv[1]), service="lethe-gateway")
count_recall("prepared")
print(generate_latest().decode())
metrics.get_meter_provider().shutdown()  # exports what is left, as `lethe` does on its way out
"""


class _Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, str, int]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.received.append((self.path, self.headers.get("content-type", ""), len(body)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, str, int]]]]:
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    _Collector.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", _Collector.received
    server.shutdown()


@pytest.mark.parametrize(("setting", "url"), [
    ("http://collector:4318", "http://collector:4318/v1/metrics"),
    ("http://collector:4318/", "http://collector:4318/v1/metrics"),
    ("http://collector:4318/v1/traces", "http://collector:4318/v1/metrics"),
    ("https://otlp.example.com/otlp/v1/metrics/", "https://otlp.example.com/otlp/v1/metrics"),
])
def test_the_metrics_url_is_the_collectors_metrics_path(setting: str, url: str) -> None:
    assert otlp_url(setting, "metrics") == url
    assert otlp_url(setting, "traces") == url.removesuffix("/v1/metrics") + "/v1/traces"


def test_metrics_are_pushed_to_the_collector_and_still_scraped(
    collector: tuple[str, list[tuple[str, str, int]]]
) -> None:
    url, received = collector
    env = {k: v for k, v in os.environ.items() if not k.startswith("LETHE_")}
    # The setting as a tracing user may have written it: the metrics still go to /v1/metrics.
    scraped = subprocess.run([sys.executable, "-c", _PUSH, url + "/v1/traces"], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True, timeout=120).stdout
    assert 'lethe_recall_blocks_total{' in scraped and 'provenance="prepared"' in scraped
    pushed = [(path, kind, size) for path, kind, size in received if path == "/v1/metrics"]
    assert pushed and pushed[0][1] == "application/x-protobuf" and pushed[0][2] > 0, received
