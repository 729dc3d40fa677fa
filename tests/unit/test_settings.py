"""Settings: every one documented, parsed the way operators write them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from config.settings import Settings

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_is_documented_in_the_readme_and_nothing_else() -> None:
    documented = set(re.findall(r"^\| `(LETHE_[A-Z_]+)` \|", README.read_text(), re.M))
    fields = {f"LETHE_{name.upper()}" for name in Settings.model_fields}
    assert documented == fields


def test_ceiling_defaults_to_200k_and_reads_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).ceiling_tokens == 200_000  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_CEILING_TOKENS", "8000")
    assert Settings(_env_file=None).ceiling_tokens == 8000  # type: ignore[call-arg]


def test_plain_postgres_url_gets_the_async_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_DATABASE_URL", "postgres://u:p@db:5432/lethe")
    assert Settings(_env_file=None).database_url == "postgresql+asyncpg://u:p@db:5432/lethe"  # type: ignore[call-arg]


def test_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_TEMPORAL_TLS_CERT", "")
    assert Settings(_env_file=None).temporal_tls_cert is None  # type: ignore[call-arg]


def test_bad_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_CEILING_TOKENS", "lots")
    with pytest.raises(ValidationError, match="ceiling_tokens"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_production_refuses_a_placeholder_admin_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LETHE_ADMIN_TOKEN", "change-me")
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_ENV", "development")
    assert not Settings(_env_file=None).admin_enabled  # type: ignore[call-arg]


def test_settings_pass_to_a_child_process_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    given = Settings(_env_file=None, database_url="postgresql://u@h/db", admin_token=SecretStr("s3cret-token"),  # type: ignore[call-arg]
                     allow_clock_override=True, port=9123, data_dir=Path("/tmp/elsewhere"))
    for name, value in given.as_environment().items():
        monkeypatch.setenv(name, value)
    assert Settings(_env_file=None) == given  # type: ignore[call-arg]


def test_embedder_precision_is_auto_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).embedder_precision == "auto"  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_EMBEDDER_PRECISION", "float32")
    assert Settings(_env_file=None).embedder_precision == "float32"  # type: ignore[call-arg]
    monkeypatch.setenv("LETHE_EMBEDDER_PRECISION", "fp16")
    with pytest.raises(ValidationError, match="embedder_precision"):
        Settings(_env_file=None)  # type: ignore[call-arg]
