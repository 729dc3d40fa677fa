"""Settings: every one documented, parsed the way operators write them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from config.settings import Settings

CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_every_setting_is_documented_in_docs_configuration_and_nothing_else() -> None:
    documented = set(re.findall(r"^\| `(LETHE_[A-Z_]+)` \|", CONFIGURATION.read_text(), re.M))
    assert documented == set(Settings.variables())


def test_ceiling_defaults_to_200k_and_reads_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).mechanism.ceiling_tokens == 200_000  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_CEILING_TOKENS", "8000")
    assert Settings(_env_file=None).mechanism.ceiling_tokens == 8000  # type: ignore[call-arg]


def test_plain_postgres_url_gets_the_async_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_DATABASE_URL", "postgres://u:p@db:5432/lethe")
    assert Settings(_env_file=None).database.url == "postgresql+asyncpg://u:p@db:5432/lethe"  # type: ignore[call-arg]


def test_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_TEMPORAL_TLS_CERT", "")
    assert Settings(_env_file=None).temporal.tls_cert is None  # type: ignore[call-arg]


def test_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_CEILING_TOKENS", "lots")
    with pytest.raises(ValidationError, match="ceiling_tokens"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_production_refuses_a_placeholder_admin_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_ADMIN_TOKEN", "change-me")
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_ENV", "development")
    assert not Settings(_env_file=None).gateway.admin_enabled  # type: ignore[call-arg]


def test_settings_pass_to_a_child_process_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    given = Settings(_env_file=None, database_url="postgresql://u@h/db", admin_token=SecretStr("s3cret-token"),  # type: ignore[call-arg]
                     allow_clock_override=True, port=9123, data_dir=Path("/tmp/elsewhere"))
    for name, value in given.as_environment().items():
        monkeypatch.setenv(name, value)
    assert Settings(_env_file=None) == given  # type: ignore[call-arg]


def test_embedder_precision_is_auto_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).models.embedder_precision == "auto"  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_EMBEDDER_PRECISION", "float32")
    assert Settings(_env_file=None).models.embedder_precision == "float32"  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_EMBEDDER_PRECISION", "fp16")
    with pytest.raises(ValidationError, match="embedder_precision"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_each_variable_reaches_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_DB_POOL_SIZE", "3")
    monkeypatch.setenv("LETHE_RECALL", "false")
    monkeypatch.setenv("LETHE_RECALL_BLOCK_TOKENS", "500")
    monkeypatch.setenv("LETHE_MODEL_CACHE", "/tmp/models")
    monkeypatch.setenv("LETHE_WORKER_HEALTH_PORT", "0")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.database.pool_size == 3 and settings.worker.health_port == 0
    assert not settings.recall.enabled and settings.recall.block_tokens == 500
    assert settings.models.cache == Path("/tmp/models")


def test_a_dotenv_file_is_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("LETHE_DB_POOL_SIZE=7\nLETHE_TEMPORAL_TASK_QUEUE=from-file\nLETHE_TEMPORAL_TLS_CA=\n")
    monkeypatch.setenv("LETHE_DB_POOL_SIZE", "9")
    settings = Settings(_env_file=dotenv)  # type: ignore[call-arg]
    assert settings.database.pool_size == 9 and settings.temporal.task_queue == "from-file"
    assert settings.temporal.tls_ca is None


def test_flat_names_and_groups_both_construct_and_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_RECALL_BLOCK_TOKENS", "500")
    given = Settings(_env_file=None, recall=False, port=9000, db_pool_size=4)  # type: ignore[call-arg, arg-type]
    assert not given.recall.enabled and given.recall.block_tokens == 500  # the switch leaves the rest of the group
    assert given.gateway.port == 9000 and given.database.pool_size == 4
    changed = given.replace(recall=True, ceiling_tokens=5000, database_url="postgres://u@h/db")
    assert changed.recall.enabled and changed.recall.block_tokens == 500 and changed.mechanism.ceiling_tokens == 5000
    assert changed.database.url == "postgresql+asyncpg://u@h/db" and changed.database.pool_size == 4
    with pytest.raises(ValidationError, match="ceiling_tokens"):
        given.replace(ceiling_tokens=10)
