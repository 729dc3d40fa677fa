"""The image and its entrypoints.

Every command the Dockerfile, docker-compose.yml and the Helm chart run is one of the `lethe` commands that
docs/deploy.md documents (its "Commands" table, which docs/operating.md repeats).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import helm_python as helm
import yaml

from cli.main import _parser

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "Dockerfile"
DOCS = ROOT / "docs" / "deploy.md"
CHART = ROOT / "deploy" / "helm" / "lethe"
# Chart values that switch on every template holding a container.
ALL_ON = {
    "database": {"existingSecret": "db"},
    "temporal": {"searchAttributes": {"register": True}},
    "gateway": {"ingress": {"enabled": True}},
}


def documented_commands() -> list[list[str]]:
    """`lethe ...` commands in the first column of the Commands table, e.g. ["tenant", "create", "NAME"]."""
    section = DOCS.read_text().split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    commands = [shlex.split(match) for match in re.findall(r"^\| `lethe ([^`]+)` \|", section, re.MULTILINE)]
    assert commands, "docs/deploy.md has no Commands table"
    return commands


def is_documented(args: list[str]) -> bool:
    """Placeholders (upper-case words such as NAME) match any value."""
    return any(
        len(args) == len(command)
        and all(word == arg or (word.isupper() and not arg.startswith("-"))
                for word, arg in zip(command, args, strict=True))
        for command in documented_commands()
    )


def instructions(name: str) -> list[str]:
    """Arguments of every `name` instruction in the Dockerfile (continuation lines joined)."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    return [line.split(None, 1)[1].strip() for line in text.splitlines()
            if line.strip().upper().startswith(name + " ")]


def exec_form(instruction: str) -> list[str]:
    value = instruction.split(None, 1)[1] if instruction.startswith("CMD ") else instruction
    parsed = json.loads(value)
    assert isinstance(parsed, list), f"{instruction!r} should be in exec form"
    return parsed


def test_every_documented_command_is_one_the_lethe_cli_accepts() -> None:
    parser = _parser()
    for command in documented_commands():
        # Placeholders stand for any value; argparse exits on anything it does not know.
        parser.parse_args([word.lower() if word.isupper() else word for word in command])


def test_every_lethe_command_but_dev_is_documented_for_deployment() -> None:
    (commands,) = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    documented = {command[0] for command in documented_commands()}
    assert set(commands.choices) - {"dev"} == documented and "dev" not in documented


def test_dockerfile_entrypoint_is_a_documented_command() -> None:
    (entrypoint,) = instructions("ENTRYPOINT")
    (cmd,) = instructions("CMD")
    assert exec_form(entrypoint) == ["lethe"]
    assert is_documented(exec_form(cmd))


def test_compose_runs_only_documented_commands() -> None:
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    lethe = {name: service for name, service in services.items() if "build" in service}
    commands = {name: service.get("command") for name, service in lethe.items()}
    assert all(isinstance(command, list) for command in commands.values()), "use exec form"
    for name, service in lethe.items():
        assert "entrypoint" not in service, f"{name} must keep the image's `lethe` entrypoint"
        assert is_documented(commands[name]), f"{name}: lethe {' '.join(commands[name])}"
    assert sorted(map(tuple, commands.values())) == sorted(
        [("gateway",), ("worker",), ("migrate",), ("register-search-attributes",)]
    )


def chart_containers() -> list[dict[str, Any]]:
    with helm.Chart.load(CHART) as chart:
        files = chart.render(ALL_ON, name="lethe", namespace="lethe", is_install=True)
    boxes = []
    for path, text in files.items():
        if path.endswith(".txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc and doc["kind"] in {"Deployment", "Job"}:
                spec = doc["spec"]["template"]["spec"]
                boxes.extend(spec.get("initContainers", []) + spec["containers"])
    return boxes


def test_chart_runs_only_documented_commands() -> None:
    boxes = chart_containers()
    assert len(boxes) == 4
    for box in boxes:
        assert "command" not in box, f"{box['name']} must keep the image's `lethe` entrypoint"
        assert is_documented(box["args"]), f"{box['name']}: lethe {' '.join(box['args'])}"
    assert sorted(box["args"][0] for box in boxes) == ["gateway", "migrate", "register-search-attributes",
                                                       "worker"]


def test_notes_and_docs_create_tenants_with_the_documented_command() -> None:
    notes = (CHART / "templates" / "NOTES.txt").read_text()
    for text in (notes, DOCS.read_text()):
        for args in re.findall(r"\blethe (tenant [a-z]+ [A-Za-z]+)", text):
            assert is_documented(args.split()), args


def test_image_is_multi_stage_slim_and_non_root() -> None:
    stages = instructions("FROM")
    assert len(stages) >= 2
    assert all("slim" in stage or stage.startswith("${PYTHON_IMAGE}") for stage in stages)
    assert any("slim" in arg for arg in instructions("ARG"))
    (user,) = instructions("USER")
    assert user.split(":")[0] not in {"root", "0"}
    (healthcheck,) = instructions("HEALTHCHECK")
    assert "CMD" in healthcheck
    run = " ".join(instructions("RUN"))
    assert "uv sync --locked --no-dev --no-editable" in run


def test_image_copies_every_package_and_dockerignore_lets_them_through() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    includes = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {pattern.rstrip("*") for pattern in includes}
    copied = {arg.split()[0].rstrip("/") for arg in instructions("COPY") if not arg.startswith("--")}
    assert packages <= copied, f"not copied into the build: {packages - copied}"
    allowed = {line[1:].rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.startswith("!")}
    assert packages | {"pyproject.toml", "README.md", "deploy/docker/healthcheck.py"} <= allowed
    assert (ROOT / "deploy" / "docker" / "healthcheck.py").is_file()
