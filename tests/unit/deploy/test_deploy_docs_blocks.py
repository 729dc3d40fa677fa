"""The code blocks of docs/deploy.md and docs/operating.md, checked by what they would do, since this machine has
no Docker engine, Kubernetes cluster, helm binary or Temporal Cloud account to run them on: every `lethe`
command they run is one the CLI accepts, every `helm install` renders the chart into valid Kubernetes with the
secrets the block creates, every compose service and Deployment they name exists, the image tag is the version,
and the search attributes they register are Lethe's own. docs/integrate.md, docs/concepts.md and README.md blocks
are run for real (tests/integration/test_readme_blocks.py)."""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from cli.main import _parser
from contracts.lane_names import ALL_ATTRIBUTES
from contracts.version import VERSION

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "deploy" / "helm" / "lethe"
FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```$", re.M | re.S)
KIND = {"keyword": "Keyword", "bool": "Bool", "datetime": "Datetime", "int": "Int"}


def _commands(doc: str) -> list[list[str]]:
    """Each command of the file's sh/bash blocks, continuation lines joined and comments dropped, as argv."""
    commands = []
    for language, code in FENCE.findall((ROOT / doc).read_text()):
        if language not in ("sh", "bash"):
            continue
        for line in code.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


DEPLOY = _commands("docs/deploy.md")
OPERATING = _commands("docs/operating.md")


def _lethe_accepts(args: list[str]) -> None:
    # Placeholders such as `...` never reach the parser: only the command's own words do.
    _parser().parse_args(args)


def _values(args: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for flag, setting in zip(args, args[1:], strict=False):
        if flag != "--set":
            continue
        path, value = setting.split("=", 1)
        *parents, leaf = path.split(".")
        node = values
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = {"true": True, "false": False}.get(value, value)
    return values


def test_the_blocks_were_found() -> None:
    programs = [c[0] for c in DEPLOY]
    assert {"docker", "kubectl", "helm", "tcld"} <= set(programs), programs
    assert [c[0] for c in OPERATING] == ["temporal", "temporal"]


def test_docker_blocks_build_the_versioned_image_and_run_lethe_commands() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    built = [c for c in DEPLOY if c[:2] == ["docker", "build"]]
    assert built and all(c[c.index("-t") + 1] == f"lethe:{VERSION}" for c in built)
    runs = [c for c in DEPLOY if c[:2] == ["docker", "run"]]
    assert runs
    for command in runs:
        image = next(i for i, word in enumerate(command) if word.startswith("lethe:"))
        assert command[image] == f"lethe:{VERSION}"
        _lethe_accepts(command[image + 1:])
    for command in (c for c in DEPLOY if c[:3] == ["docker", "compose", "run"]):
        service = next(word for word in command[3:] if not word.startswith("-"))
        assert service in compose, service
        _lethe_accepts(command[command.index(service) + 1:])


@pytest.mark.parametrize("block", range(sum(c[:2] == ["helm", "install"] for c in DEPLOY)))
def test_each_helm_install_renders_valid_kubernetes_with_the_secrets_it_names(block: int) -> None:
    command = [c for c in DEPLOY if c[:2] == ["helm", "install"]][block]
    release, chart_path = command[2], command[3]
    assert ROOT / chart_path == CHART
    values = _values(command)
    with helm.Chart.load(CHART) as chart:
        files = chart.render(copy.deepcopy(values), name=release, namespace="lethe", is_install=True)
    docs = [doc for path, text in files.items() if not path.endswith(".txt")
            for doc in yaml.safe_load_all(text) if doc]
    for doc in docs:
        if not doc["apiVersion"].startswith("monitoring.coreos.com/"):
            kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
    # Every existing secret the values point at is one a `kubectl create secret` of the file makes.
    made = {c[c.index("generic") + 1] if "generic" in c else c[c.index("tls") + 1]
            for c in DEPLOY if c[:3] == ["kubectl", "-n", "lethe"] and "secret" in c and "create" in c}
    named = {found for found in re.findall(r"existingSecret': '([^']+)'", repr(values))}
    assert named and named <= made, (named, made)
    deployments = {doc["metadata"]["name"] for doc in docs if doc["kind"] == "Deployment"}
    for exec_ in (c for c in DEPLOY if c[:1] == ["kubectl"] and "exec" in c):
        target = exec_[exec_.index("exec") + 1]
        assert target.removeprefix("deploy/") in deployments, (target, deployments)
        _lethe_accepts(exec_[exec_.index("--") + 2:])


def test_tcld_registers_exactly_lethes_search_attributes() -> None:
    (command,) = [c for c in DEPLOY if c[0] == "tcld"]
    given = {value for flag, value in zip(command, command[1:], strict=False) if flag == "--search-attribute"}
    assert given == {f"{a.name}={KIND[a.kind]}" for a in ALL_ATTRIBUTES}


def test_operating_temporal_queries_name_lethes_attributes_and_query() -> None:
    listing, query = OPERATING
    assert listing[:3] == ["temporal", "workflow", "list"]
    names = {a.name for a in ALL_ATTRIBUTES}
    assert set(re.findall(r"Lethe\w+", listing[listing.index("--query") + 1])) <= names
    assert query[:3] == ["temporal", "workflow", "query"] and query[query.index("--type") + 1] == "lane"
    assert query[query.index("--workflow-id") + 1].startswith("memory/")


def test_operating_python_fragment_is_python_on_temporals_real_api() -> None:
    """The one Python block is a fragment of workflow code (no workflow to run it in): it parses, and what it
    calls on `workflow` is Temporal's API."""
    import ast

    from temporalio import workflow

    (code,) = [code for language, code in FENCE.findall((ROOT / "docs/operating.md").read_text())
               if language == "python"]
    called = {node.attr for node in ast.walk(ast.parse(code))
              if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "workflow"}
    assert called and all(hasattr(workflow, name) for name in called), called
