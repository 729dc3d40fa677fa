"""All of Lethe's configuration, from `LETHE_*` environment variables (or a `.env` file), in groups by concern.

The variables keep their flat names (`LETHE_DATABASE_URL`, `LETHE_RECALL_BLOCK_TOKENS`); each group says which
of its fields each names (config/groups.py), and the sources below put what they read into its group. Keyword
arguments and `replace()` take the same flat names (`Settings(database_url=...)`), or whole groups.
Every variable is documented in docs/configuration.md's table; a test checks that the two agree.
Layers never read this directly: the CLI builds it once and passes the groups down.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from config.groups import (
    PLACEHOLDER_SECRETS,
    DatabaseSettings,
    GatewaySettings,
    Group,
    LimitsSettings,
    MechanismSettings,
    ModelSettings,
    ObservabilitySettings,
    RecallSettings,
    TemporalSettings,
    WorkerSettings,
)

__all__ = ["PLACEHOLDER_SECRETS", "Settings", "get_settings"]

PREFIX = "LETHE_"


class Settings(BaseSettings):
    # Empty variables count as unset, so `LETHE_TEMPORAL_TLS_CERT=` never becomes the path ".".
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_file=".env", extra="ignore", env_ignore_empty=True)

    # Where Lethe runs.
    env: Literal["development", "production"] = "production"
    data_dir: Path = Path(".lethe")

    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    temporal: TemporalSettings = Field(default_factory=TemporalSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    mechanism: MechanismSettings = Field(default_factory=MechanismSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    models: ModelSettings = Field(default_factory=ModelSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # pydantic-settings would read a group from one variable named after it (LETHE_DATABASE, as JSON);
        # these read the flat variables pydantic-settings has already loaded (empties dropped) instead.
        return (_Grouped(settings_cls, init_settings), _Grouped(settings_cls, env_settings, variables=True),
                _Grouped(settings_cls, dotenv_settings, variables=True))

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> Settings:
        # Empty leaves the admin endpoints off; a copied placeholder in production is a mistake to stop on.
        token = self.gateway.admin_token.get_secret_value()
        if self.env == "production" and token and token in PLACEHOLDER_SECRETS:
            raise ValueError(f"LETHE_ADMIN_TOKEN is the placeholder {token!r}: set a real secret, or leave it empty")
        secret = self.gateway.secret_key.get_secret_value()
        if self.env == "production" and secret and secret in PLACEHOLDER_SECRETS:
            raise ValueError(f"LETHE_SECRET_KEY is the placeholder {secret!r}: set a real secret, or leave it empty")
        return self

    @classmethod
    def variables(cls) -> dict[str, FieldInfo]:
        """Every `LETHE_*` variable, with the field it sets (its type and default)."""
        return {PREFIX + flat.upper(): _field(cls, group, name) for flat, (group, name) in _flat_names(cls).items()}

    def replace(self, **changes: Any) -> Settings:
        """A copy with `changes` (flat names, as in `Settings(...)`, or whole groups), validated again."""
        return type(self).model_validate(_merge(self.model_dump(), _nest(type(self), changes)))

    def as_environment(self) -> dict[str, str]:
        """These settings as the `LETHE_*` variables that reproduce them in a child process."""
        env = {}
        for flat, (group, name) in _flat_names(type(self)).items():
            value = getattr(getattr(self, group) if group else self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, dict | list):
                value = json.dumps(value)
            env[PREFIX + flat.upper()] = str(value)
        return env


def _group(settings_cls: type[BaseSettings], name: str) -> type[Group] | None:
    kind = settings_cls.model_fields[name].annotation
    return kind if isinstance(kind, type) and issubclass(kind, Group) else None


def _field(settings_cls: type[BaseSettings], group: str | None, name: str) -> FieldInfo:
    if group is None:
        return settings_cls.model_fields[name]
    kind = _group(settings_cls, group)
    assert kind is not None
    return kind.model_fields[name]


@cache
def _flat_names(settings_cls: type[BaseSettings]) -> dict[str, tuple[str | None, str]]:
    """Each flat name (the variable without `LETHE_`, lower case) -> its group (None: top level) and field."""
    table: dict[str, tuple[str | None, str]] = {}
    for name in settings_cls.model_fields:
        kind = _group(settings_cls, name)
        if kind is None:
            table[name] = (None, name)
        else:
            table.update({flat: (name, field) for field, flat in kind.flat_names().items()})
    return table


def _nest(settings_cls: type[BaseSettings], values: dict[str, Any]) -> dict[str, Any]:
    """`values` with flat names put in their groups. `recall` is both a group and a flat name (LETHE_RECALL):
    a dict or a group object is the group, anything else the switch."""
    nested: dict[str, Any] = {}
    table = _flat_names(settings_cls)
    for key, value in values.items():
        group, name = table.get(key, (None, key))
        if key in settings_cls.model_fields and _group(settings_cls, key) and isinstance(value, dict | BaseModel):
            group, name = None, key
        if group is None:
            nested[name] = _merge(nested[name], _as_dict(value)) if name in nested else value
        else:
            nested[group] = _merge(_as_dict(nested.get(group, {})), {name: value})
    return nested


def _as_dict(value: Any) -> Any:
    return dict(value) if isinstance(value, BaseModel) else value


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(merged.get(key), dict) and isinstance(value, dict | BaseModel):
            merged[key] = {**merged[key], **_as_dict(value)}
        else:
            merged[key] = value
    return merged


class _Grouped(PydanticBaseSettingsSource):
    """One of pydantic-settings' own sources, what it read put in groups: the keyword arguments, or (with
    `variables`) the environment's or the .env file's `LETHE_*` variables, which it has loaded already."""

    def __init__(self, settings_cls: type[BaseSettings], source: PydanticBaseSettingsSource, *,
                 variables: bool = False) -> None:
        super().__init__(settings_cls)
        self.source, self.variables = source, variables

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # not used: __call__ reads the source whole

    def __call__(self) -> dict[str, Any]:
        if not self.variables:
            return _nest(self.settings_cls, self.source())
        loaded: dict[str, str | None] = dict(getattr(self.source, "env_vars", {}))
        found = {flat: loaded[(PREFIX + flat).lower()] for flat in _flat_names(self.settings_cls)
                 if loaded.get((PREFIX + flat).lower()) is not None}
        return _nest(self.settings_cls, found)


@lru_cache
def get_settings() -> Settings:
    return Settings()
