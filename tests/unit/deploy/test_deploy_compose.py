"""docker-compose.yml, checked by parsing (no Docker engine here): health, start order, and settings.

The settings come from `config.settings.Settings` at test time, so a new field fails here until the
compose stack (through .env.example or `environment:`) provides it.
"""

from __future__ import annotations

import json
import os
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import compose_spec
import pytest
import yaml

from config.settings import PLACEHOLDER_SECRETS, Settings

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"
ENV_EXAMPLE = ROOT / ".env.example"
PREFIX = "LETHE_"
# Distroless images: no shell and no HTTP client inside, so Docker cannot run a health check in them.
# Nothing may wait for their health; they must restart on failure instead.
CANNOT_HEALTHCHECK = {"otel-collector"}
# Settings whose defaults point at this machine; inside the stack they must name the other services.
STACK_SETTINGS = {"LETHE_HOST", "LETHE_DATABASE_URL", "LETHE_TEMPORAL_ADDRESS", "LETHE_TEMPORAL_NAMESPACE",
                  "LETHE_ADMIN_TOKEN", "LETHE_OTLP_ENDPOINT"}
INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error}, against `env` (a fresh checkout: no .env)."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        current = env.get(name)
        if op in (":-", "-") and (current is None or (op == ":-" and current == "")):
            return arg
        if op in (":?", "?") and not current:
            raise AssertionError(f"${{{name}}} is required: {arg}")
        return current or ""

    return INTERPOLATION.sub(replace, value)


def parse_env_file(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(active assignments, commented-out assignments) of a dotenv file."""
    active: dict[str, str] = {}
    commented: dict[str, str] = {}
    for line in path.read_text().splitlines():
        text = line.strip()
        target = active
        if text.startswith("#"):
            text, target = text.lstrip("#").strip(), commented
        match = re.fullmatch(r"([A-Z][A-Z0-9_]*)=(.*)", text)
        if match:
            target[match[1]] = match[2]
    return active, commented


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return interpolate(yaml.safe_load(COMPOSE.read_text()), {})


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return compose["services"]


@pytest.fixture(scope="module")
def lethe_services(services: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The services running the image built from this repository."""
    found = {name: service for name, service in services.items() if "build" in service}
    assert {"migrate", "search-attributes", "gateway", "worker"} <= set(found)
    return found


def setting_names() -> set[str]:
    return set(Settings.variables())


def optional_settings() -> set[str]:
    """Fields that default to None: unset means off, and an empty value would not mean that."""
    return {name for name, field in Settings.variables().items() if field.default is None}


def is_one_shot(service: dict[str, Any]) -> bool:
    return str(service.get("restart", "no")) == "no" or str(service["restart"]).startswith("on-failure")


def has_healthcheck(service: dict[str, Any]) -> bool:
    check = service.get("healthcheck", {})
    return bool(check.get("test")) and not check.get("disable") and check["test"] != ["NONE"]


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    raw = service.get("depends_on", {})
    if isinstance(raw, list):
        return {name: "service_started" for name in raw}
    return {name: spec.get("condition", "service_started") for name, spec in raw.items()}


def effective_env(service: dict[str, Any]) -> dict[str, str]:
    """What a Lethe container sees: the required env_files in order, then `environment:` on top."""
    env: dict[str, str] = {}
    for entry in service.get("env_file", []):
        spec = {"path": entry, "required": True} if isinstance(entry, str) else entry
        if spec.get("required", True):
            env.update(parse_env_file(ROOT / spec["path"])[0])
    raw = service.get("environment", {})
    if isinstance(raw, list):
        raw = dict(item.split("=", 1) for item in raw)
    env.update({key: "" if value is None else str(value) for key, value in raw.items()})
    return env


def ancestors(services: dict[str, dict[str, Any]], name: str) -> dict[str, set[str]]:
    """Every service `name` waits for, directly or not, with the conditions it is reached through."""
    found: dict[str, set[str]] = {}
    stack = [name]
    while stack:
        for dependency, condition in depends_on(services[stack.pop()]).items():
            if dependency not in found:
                stack.append(dependency)
            found.setdefault(dependency, set()).add(condition)
    return found


def test_compose_file_follows_the_compose_specification(compose: dict[str, Any]) -> None:
    """Keys and value types as the Compose Specification defines them (YAML merges and variables resolved)."""
    try:
        compose_spec.PyCompose.from_json(json.dumps(compose)).validate()
    except ValueError as exc:
        pytest.fail(f"docker-compose.yml: {exc}")


def test_every_service_has_a_healthcheck_or_is_one_shot(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        if name in CANNOT_HEALTHCHECK:
            assert service["restart"] == "unless-stopped", name
            continue
        assert has_healthcheck(service) or is_one_shot(service), f"{name}: no health check and not one-shot"
        if has_healthcheck(service):
            assert service["restart"] == "unless-stopped", f"{name}: long-running, so it restarts"


def test_dependencies_exist_and_their_conditions_can_be_met(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        for dependency, condition in depends_on(service).items():
            assert dependency in services, f"{name} depends on unknown {dependency}"
            target = services[dependency]
            if condition == "service_healthy":
                assert has_healthcheck(target), f"{name} waits for {dependency}'s health; it has no check"
            elif condition == "service_completed_successfully":
                assert is_one_shot(target), f"{name} waits for {dependency} to finish; it runs forever"
            else:
                assert condition == "service_started", condition
                assert dependency in CANNOT_HEALTHCHECK, f"{name} should wait for {dependency}'s health"


def test_start_order_has_no_cycle(services: dict[str, dict[str, Any]]) -> None:
    graph = {name: set(depends_on(service)) for name, service in services.items()}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"depends_on cycle: {exc.args[1]}")
    assert order.index("postgres") < order.index("migrate") < order.index("gateway")


@pytest.mark.parametrize("name", ["gateway", "worker"])
def test_gateway_and_worker_start_after_migrations_and_search_attributes(
    services: dict[str, dict[str, Any]], name: str
) -> None:
    waits = ancestors(services, name)
    assert "service_completed_successfully" in waits["migrate"]
    assert "service_completed_successfully" in waits["search-attributes"]
    assert "service_healthy" in waits["postgres"]
    assert "service_healthy" in waits["temporal"]
    assert "otel-collector" in waits
    # Search attributes go into a namespace that exists, on a server whose schema exists.
    registration = ancestors(services, "search-attributes")
    assert "service_completed_successfully" in registration["temporal-namespace"]
    assert "service_completed_successfully" in registration["temporal-schema"]
    assert "service_healthy" in ancestors(services, "migrate")["postgres"]


@pytest.mark.parametrize("name", ["migrate", "search-attributes", "gateway", "worker"])
def test_every_setting_is_provided(lethe_services: dict[str, dict[str, Any]], name: str) -> None:
    env = effective_env(lethe_services[name])
    missing = setting_names() - optional_settings() - set(env)
    assert not missing, f"{name} does not set {sorted(missing)} (add them to .env.example or environment:)"
    for setting in optional_settings():
        assert env.get(setting, None) != "", f"{name}: {setting}='' is not unset (an empty path is '.')"
    assert STACK_SETTINGS <= set(lethe_services[name]["environment"]), name


@pytest.mark.parametrize("name", ["migrate", "search-attributes", "gateway", "worker"])
def test_the_settings_load_and_fit_the_stack(
    lethe_services: dict[str, dict[str, Any]], services: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch, name: str,
) -> None:
    env = effective_env(lethe_services[name])
    for key in [key for key in os.environ if key.startswith(PREFIX)]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]

    gateway = settings.gateway
    assert gateway.host == "0.0.0.0"
    assert settings.database.url.startswith("postgresql+asyncpg://")
    assert urlsplit(settings.database.url).hostname in services
    assert settings.temporal.address.rsplit(":", 1)[0] in services
    assert urlsplit(settings.observability.otlp_endpoint).hostname in services
    assert gateway.admin_token.get_secret_value() not in PLACEHOLDER_SECRETS
    assert settings.temporal.tls_cert is None and settings.temporal.api_key is None
    check = " ".join(lethe_services[name].get("healthcheck", {}).get("test", []))
    if name == "gateway":
        assert f"127.0.0.1:{gateway.port}:{gateway.port}" in lethe_services[name]["ports"]
        assert f":{gateway.port}/readyz" in check
    if name == "worker":
        assert f":{settings.worker.health_port}/readyz" in check


def test_env_example_documents_every_setting_and_nothing_else() -> None:
    active, commented = parse_env_file(ENV_EXAMPLE)
    listed = set(active) | set(commented)
    assert setting_names() - listed == set(), "settings missing from .env.example"
    assert {key for key in listed if key.startswith(PREFIX)} - setting_names() == set(), "unknown settings"
    # Optional settings stay commented out, so they remain unset rather than empty.
    assert optional_settings().isdisjoint(active)
    # Each setting, or each group of settings on consecutive lines, has a comment above it.
    lines = ENV_EXAMPLE.read_text().splitlines()
    assignment = re.compile(r"#? ?[A-Z][A-Z0-9_]*=")
    for index, line in enumerate(lines):
        if assignment.match(line):
            above = index - 1
            while above >= 0 and assignment.match(lines[above]):
                above -= 1
            assert above >= 0 and lines[above].startswith("#"), f"{line.split('=')[0]} is not explained"


def test_compose_sets_only_real_settings(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        if "build" not in service:
            continue
        unknown = {key for key in service["environment"] if key.startswith(PREFIX)} - setting_names()
        assert not unknown, f"{name}: {unknown}"


def test_images_are_pinned(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        image = service["image"]
        tag = image.rsplit(":", 1)[1] if ":" in image.split("/")[-1] else ""
        assert tag and tag != "latest", f"{name}: {image} is not pinned"


def test_mounted_files_exist(services: dict[str, dict[str, Any]]) -> None:
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
        for entry in service.get("env_file", []):
            spec = {"path": entry, "required": True} if isinstance(entry, str) else entry
            if spec.get("required", True):
                assert (ROOT / spec["path"]).is_file(), f"{name}: env_file {spec['path']} is missing"


def test_persistent_data_lives_in_a_volume(compose: dict[str, Any]) -> None:
    postgres = compose["services"]["postgres"]
    assert postgres["image"].startswith("pgvector/pgvector:")
    assert any(volume.startswith("pgdata:/var/lib/postgresql/data") for volume in postgres["volumes"])
    assert "pgdata" in compose["volumes"]


def test_lethe_containers_are_read_only_like_in_kubernetes(lethe_services: dict[str, dict[str, Any]]) -> None:
    for name, service in lethe_services.items():
        assert service["read_only"] is True, name
        assert "/tmp" in service["tmpfs"], name


def test_env_example_copied_to_env_gives_every_service_settings_that_start(
    lethe_services: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `cp .env.example .env`, as docs/deploy.md says: each container's settings must validate (production
    # refuses a placeholder secret, so the example must hold none).
    copied = parse_env_file(ROOT / ".env.example")[0]
    # Compose interpolates ${VAR} in `environment:` from the project's .env: here, the copy.
    raw = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in interpolate({name: raw[name] for name in lethe_services}, copied).items():
        for key in [k for k in os.environ if k.startswith("LETHE_")]:
            monkeypatch.delenv(key)
        for key, value in {**copied, **effective_env(service)}.items():
            monkeypatch.setenv(key, value)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]  # raises on a refused value
        assert settings.env == "production", name
