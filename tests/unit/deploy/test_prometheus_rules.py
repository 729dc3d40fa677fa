"""Lethe's alert rules (the chart's PrometheusRule and deploy/prometheus/lethe-rules.yaml) are the same rules, well
formed, and name only metrics Lethe exports; the chart's monitors send the metrics token and scrape the worker.

There is no promtool here: the expressions are checked for balanced brackets, known functions and keywords, and
metric names taken from a real scrape of Lethe's exporter (a subprocess, so this process's meter provider stays
as the other tests find it).
"""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "deploy" / "helm" / "lethe"
RULES_FILE = ROOT / "deploy" / "prometheus" / "lethe-rules.yaml"
RELEASE = "lethe"
NAMESPACE = "lethe"
MONITORED = {"database": {"existingSecret": "lethe-db"}, "serviceMonitor": {"enabled": True},
             "prometheusRule": {"enabled": True, "labels": {"release": "prometheus"}}}

# One of everything Lethe measures, recorded and scraped as Prometheus reads it.
_SCRAPE = """
from datetime import UTC, datetime
from prometheus_client import generate_latest
from api.routes.metrics import LATENCY, REQUESTS
from cli.telemetry import configure_metrics
from config.groups import ObservabilitySettings
from service import metrics
from store.repositories.lane_totals import LaneTotals

configure_metrics(ObservabilitySettings(), service="lethe-rules-check")
metrics.count_cache(hit=True)
metrics.count_cache(hit=False)
metrics.count_recall("prepared")
now = datetime.now(UTC)
metrics.observe_relay_lag([now], now)
metrics.ACTIVITY_DURATION.record(0.1, {"activity": "fetch_events", "outcome": "ok"})
metrics.publish(LaneTotals(backlog=1, memories=1, largest=[("t", "m", 1)], parked_jobs=0), 0, fresh_for=60)
REQUESTS.labels("/v1/health", "GET", "200").inc()
LATENCY.labels("/v1/health", "GET").observe(0.01)
print(generate_latest().decode())
"""

FUNCTIONS = {"abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes", "clamp_max", "clamp_min",
             "delta", "deriv", "floor", "histogram_quantile", "idelta", "increase", "irate", "max_over_time",
             "min_over_time", "predict_linear", "rate", "resets", "round", "sum_over_time", "time", "vector",
             "sum", "min", "max", "avg", "count", "stddev", "topk", "bottomk", "quantile", "count_values", "group"}
KEYWORDS = {"by", "without", "and", "or", "unless", "bool", "on", "ignoring", "group_left", "group_right", "offset"}


@pytest.fixture(scope="module")
def exported() -> dict[str, set[str]]:
    """Every sample name Lethe's processes export, with the label names each carries."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LETHE_")}
    text = subprocess.run([sys.executable, "-c", _SCRAPE], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True, timeout=120).stdout
    names: dict[str, set[str]] = {}
    for line in text.splitlines():
        if match := re.fullmatch(r"(lethe_\w+)(?:\{(.*)\})? \S+", line):
            names.setdefault(match.group(1), set()).update(re.findall(r'(\w+)="', match.group(2) or ""))
    return names


@pytest.fixture(scope="module")
def chart() -> Any:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


def render(chart: Any, values: dict[str, Any]) -> list[dict[str, Any]]:
    files = chart.render(copy.deepcopy(values), name=RELEASE, namespace=NAMESPACE, is_install=True)
    return [doc for path, text in files.items() if not path.endswith(".txt")
            for doc in yaml.safe_load_all(text) if doc]


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


def all_rules() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES_FILE.read_text())["groups"] for rule in group["rules"]]


def test_the_chart_ships_the_rules_of_the_rules_file(chart: Any) -> None:
    (rule,) = of_kind(render(chart, MONITORED), "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["labels"]["release"] == "prometheus"
    assert rule["spec"]["groups"] == yaml.safe_load(RULES_FILE.read_text())["groups"]
    assert not of_kind(render(chart, {}), "PrometheusRule")


def test_alerts_cover_note_asks_lane_backlog_and_parked_jobs() -> None:
    watched = " ".join(rule["expr"] for rule in all_rules())
    for metric in ("lethe_note_asks_pending", "lethe_lane_backlog", "lethe_lane_parked_jobs"):
        assert re.search(rf"\b{metric}\b", watched), metric


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule["alert"])
def test_each_rule_is_well_formed(rule: dict[str, Any]) -> None:
    assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}
    assert re.fullmatch(r"Lethe[A-Z][A-Za-z]+", rule["alert"])
    assert re.fullmatch(r"\d+[smh]", rule.get("for", "0s"))
    assert rule["labels"]["severity"] in {"info", "warning", "critical"}
    assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    for text in rule["annotations"].values():  # Prometheus' templates: only the alert's value and labels
        assert set(re.findall(r"\{\{\s*(\$\w+)", text)) <= {"$value", "$labels"}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule["alert"])
def test_each_expression_names_only_exported_metrics(rule: dict[str, Any], exported: dict[str, set[str]]) -> None:
    expr = rule["expr"]
    assert _balanced(expr), expr
    # Durations (`[5m]`) and numbers are not names.
    bare = re.sub(r"\[\d+[smhdw]\]", "", re.sub(r'"[^"]*"', '""', expr))
    tokens = list(re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", bare))
    metrics, labels = set(), set()
    for token in tokens:
        name, rest = token.group(), bare[token.end():].lstrip()
        before = bare[:token.start()].rstrip()
        if name in KEYWORDS:
            continue
        if rest.startswith("(") or re.match(r"(by|without)\b", rest):  # `max by (x) (...)` too
            assert name in FUNCTIONS, f"unknown function {name} in {expr}"
        elif re.search(r"\b(by|without|on|ignoring)\s*\([^)]*$", before):
            labels.add(name)
        else:
            metrics.add(name)
    assert metrics, expr
    assert metrics <= set(exported), f"not exported: {metrics - set(exported)}"
    carried = set().union(*(exported[m] for m in metrics)) | {"le"}
    assert labels <= carried, f"labels not on {metrics}: {labels - carried}"
    # Every `$labels.x` the annotations use is a label the expression keeps.
    used = {m for text in rule["annotations"].values() for m in re.findall(r"\$labels\.(\w+)", text)}
    assert used <= labels, used - labels


def test_the_rule_checker_refuses_what_it_should(exported: dict[str, set[str]]) -> None:
    assert not _balanced("max(rate(lethe_lane_backlog[5m])")
    assert not _balanced("max(lethe_lane_backlog])")
    bad = {"alert": "LetheTypo", "expr": "max(lethe_lane_backlogg) > 0", "labels": {"severity": "warning"},
           "annotations": {"summary": "s", "description": "d"}}
    with pytest.raises(AssertionError, match="not exported"):
        test_each_expression_names_only_exported_metrics(bad, exported)


def test_what_the_alerts_watch_is_exported(exported: dict[str, set[str]]) -> None:
    # The metrics docs/operating.md lists, as the exporter names them (a rename would silently break alerts).
    assert {"lethe_lane_backlog", "lethe_lane_backlog_memories", "lethe_lane_backlog_memory",
            "lethe_lane_parked_jobs", "lethe_note_asks_pending", "lethe_relay_lag_seconds_bucket",
            "lethe_activity_duration_seconds_bucket", "lethe_recall_blocks_total", "lethe_memory_cache_hits_total",
            "lethe_memory_cache_misses_total", "lethe_http_requests_total",
            "lethe_http_request_seconds_bucket"} <= set(exported)
    assert {"tenant_id", "memory_id"} <= exported["lethe_lane_backlog_memory"]
    assert {"activity", "outcome"} <= exported["lethe_activity_duration_seconds_bucket"]
    assert "provenance" in exported["lethe_recall_blocks_total"]


def _balanced(expr: str) -> bool:
    pairs, stack = {")": "(", "]": "[", "}": "{"}, []
    for char in re.sub(r'"[^"]*"', '""', expr):
        if char in "([{":
            stack.append(char)
        elif char in pairs and (not stack or stack.pop() != pairs[char]):
            return False
    return not stack


@pytest.mark.parametrize("token", [{"value": "scrape-me"},
                                   {"existingSecret": "lethe-metrics", "existingSecretKey": "t"}],
                         ids=["chart-secret", "existing-secret"])
def test_monitors_send_the_metrics_token_and_scrape_the_worker(chart: Any, token: dict[str, str]) -> None:
    docs = render(chart, {**MONITORED, "metricsToken": token})
    secret, key = (token["existingSecret"], token["existingSecretKey"]) if "existingSecret" in token \
        else (RELEASE, "metrics-token")
    if "value" in token:
        (chart_secret,) = [d for d in of_kind(docs, "Secret") if d["metadata"]["name"] == RELEASE]
        assert key in chart_secret["data"]
    (service_monitor,) = of_kind(docs, "ServiceMonitor")
    (pod_monitor,) = of_kind(docs, "PodMonitor")
    endpoints = [*service_monitor["spec"]["endpoints"], *pod_monitor["spec"]["podMetricsEndpoints"]]
    for endpoint in endpoints:
        assert endpoint["path"] == "/metrics"
        assert endpoint["authorization"] == {"type": "Bearer", "credentials": {"name": secret, "key": key}}
    workers = [d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == f"{RELEASE}-worker"]
    (worker,) = workers
    assert pod_monitor["spec"]["selector"]["matchLabels"].items() <= \
        worker["spec"]["template"]["metadata"]["labels"].items()
    (box,) = worker["spec"]["template"]["spec"]["containers"]
    assert pod_monitor["spec"]["podMetricsEndpoints"][0]["port"] in {p["name"] for p in box["ports"]}
    for deployment in of_kind(docs, "Deployment"):
        (box,) = deployment["spec"]["template"]["spec"]["containers"]
        env = {entry["name"]: entry for entry in box["env"]}
        assert env["LETHE_METRICS_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": key}


def test_without_a_token_the_monitors_send_none(chart: Any) -> None:
    docs = render(chart, MONITORED)
    (service_monitor,) = of_kind(docs, "ServiceMonitor")
    (pod_monitor,) = of_kind(docs, "PodMonitor")
    for endpoint in [*service_monitor["spec"]["endpoints"], *pod_monitor["spec"]["podMetricsEndpoints"]]:
        assert "authorization" not in endpoint
    for deployment in of_kind(docs, "Deployment"):
        (box,) = deployment["spec"]["template"]["spec"]["containers"]
        assert "LETHE_METRICS_TOKEN" not in {entry["name"] for entry in box["env"]}


def test_the_monitored_chart_lints_strictly_and_matches_its_schema(chart: Any) -> None:
    values = {**MONITORED, "metricsToken": {"value": "scrape-me"}}
    chart.validate_schema(copy.deepcopy(values))
    report = helm.lint(CHART, copy.deepcopy(values), strict=True, namespace=NAMESPACE)
    assert not report["errors"] and not [m for m in report["messages"] if m["severity"] >= 2], report
    with pytest.raises(helm.HelmValuesError):
        chart.validate_schema({"prometheusRule": {"enabeld": True}})
