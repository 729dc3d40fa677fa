"""All of Lethe's configuration, from `LETHE_*` environment variables (or a `.env` file).

Every field here is documented in the README's Configuration table; a test checks that the two agree.
Layers never read this directly: the CLI and the gateway build it once and pass values down.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRETS = {"", "changeme", "change-me", "secret"}


class Settings(BaseSettings):
    # Empty variables count as unset, so `LETHE_TEMPORAL_TLS_CERT=` never becomes the path ".".
    model_config = SettingsConfigDict(env_prefix="LETHE_", env_file=".env", extra="ignore", env_ignore_empty=True)

    # Where Lethe runs.
    env: Literal["development", "production"] = "production"
    data_dir: Path = Path(".lethe")

    # Postgres (with pgvector and pg_trgm). Empty means the embedded server under data_dir (lethe dev only).
    database_url: str = ""
    db_pool_size: int = Field(default=10, ge=1)
    # How long a call waits for a free connection before it is answered 503 with Retry-After.
    db_pool_timeout_seconds: float = Field(default=10.0, gt=0)
    # The role the gateway and worker act as (`SET ROLE` on each connection), bound by row-level security;
    # empty when the URL already logs in as a member-free app role. Migrations create it (store/rls.py).
    db_role: str = "lethe_app"

    # Temporal.
    temporal_address: str = "localhost:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "lethe-memory"
    temporal_api_key: SecretStr | None = None
    temporal_tls: bool = False
    temporal_tls_cert: Path | None = None
    temporal_tls_key: Path | None = None
    temporal_tls_ca: Path | None = None
    temporal_ui_port: int = 8233
    # Where people open the Temporal UI (the inspector links each memory's workflow there); `lethe dev` sets it.
    temporal_ui_url: str = ""

    # Gateway.
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    admin_token: SecretStr = SecretStr("")
    allow_clock_override: bool = False
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    # A body that stops arriving for this long is answered 408 (a Content-Length larger than what is sent).
    body_idle_seconds: float = Field(default=10.0, gt=0)
    # Per tenant and per gateway process; 0 turns a limit off. Over it: 429 with Retry-After.
    tenant_rate_per_second: float = Field(default=0.0, ge=0)
    tenant_rate_burst: int = Field(default=0, ge=0)  # 0: twice the rate
    tenant_max_concurrent_decorates: int = Field(default=0, ge=0)
    # /metrics on its own port (0: on the gateway's port), and/or behind `Authorization: Bearer <token>`.
    metrics_port: int = Field(default=0, ge=0, le=65535)
    metrics_token: SecretStr = SecretStr("")
    # How long a decorate's or report's answer is kept for retries with the same key (a decorate's holds the
    # whole request, so they are not kept forever).
    idempotency_hours: float = Field(default=24.0, gt=0)
    # Encrypts tenants' upstream keys at rest (comma-separated: the first encrypts, all decrypt, for rotation).
    secret_key: SecretStr = SecretStr("")
    # The OpenAI-compatible proxy: how long one upstream call may take (between streamed chunks, too), and
    # whether a request may name its own upstream in X-Lethe-Upstream-Base-URL.
    upstream_timeout_seconds: float = Field(default=600.0, gt=0)
    upstream_url_header: bool = True
    # The worker answers /healthz and /readyz here for container probes (0 turns it off).
    worker_health_port: int = Field(default=8081, ge=0, le=65535)

    # Memory mechanism.
    ceiling_tokens: int = Field(default=200_000, ge=1000)
    # An unanswered note ask shows as pending (LetheNoteAskPending) after this many calls or minutes.
    note_ask_pending_calls: int = Field(default=3, ge=1)
    note_ask_pending_minutes: float = Field(default=30.0, ge=0)
    # Recall: on or off (off, decorate is exactly what it was without recall); how long the hot path's walk may
    # take before the search hits are used as they are; the recall block's most tokens; the walk's levels.
    recall: bool = True
    recall_inline_deadline_ms: int = Field(default=150, ge=0)
    recall_block_tokens: int = Field(default=1200, ge=100)
    recall_keep_level: Literal["tangential", "relevant", "central"] = "relevant"
    recall_lead_on_level: Literal["tangential", "relevant", "central"] = "relevant"

    # Models.
    embedder: Literal["local", "openai"] = "local"
    judge: Literal["local", "openai"] = "local"
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    openai_embedding_model: str = "text-embedding-3-small"
    openai_judge_model: str = "gpt-4o-mini"
    openai_timeout_seconds: float = Field(default=20.0, gt=0)
    openai_max_retries: int = Field(default=3, ge=0)
    onnx_threads: int = Field(default=1, ge=1)
    # The gateway's embedded model runs this many texts of one call at once, each on a thread of its own: a new
    # message's parts are embedded side by side while the agent waits. The lane runs its batches one text at a
    # time, leaving the other cores to the gateway.
    onnx_parallel: int = Field(default=2, ge=1)
    # The embedded model's matrix products: `auto` times int8 and float32 on this machine at its first start and
    # takes the faster. The two give different vectors, so the first process records the precision in the
    # database and every later one uses it; an explicit value that disagrees with the record is refused.
    embedder_precision: Literal["auto", "int8", "float32"] = "auto"
    # Where the embedded model's int8 form is kept once made (providers/onnx_int8.py); unset: the user's cache.
    model_cache: Path | None = None
    # The Postgres text search configuration for the word indexes of facts and passages (`simple` keeps every
    # word as written, in any language; `english` stems). Changing it applies to what is indexed afterwards.
    search_language: str = Field(default="simple", pattern=r"^[a-z_]{1,63}$")

    # Observability.
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = True
    otlp_endpoint: str = ""
    # Spans printed to stderr, for looking at traces without a collector (lethe dev).
    trace_console: bool = False

    @field_validator("database_url")
    @classmethod
    def _asyncpg_driver(cls, value: str) -> str:
        # Operators paste plain postgres:// URLs; SQLAlchemy needs the async driver named.
        for prefix in ("postgres://", "postgresql://"):
            if value.startswith(prefix):
                return "postgresql+asyncpg://" + value[len(prefix):]
        return value

    @model_validator(mode="after")
    def _refuse_placeholder_admin_token(self) -> Settings:
        # Empty leaves the admin endpoints off; a copied placeholder in production is a mistake to stop on.
        token = self.admin_token.get_secret_value()
        if self.env == "production" and token and token in PLACEHOLDER_SECRETS:
            raise ValueError(f"LETHE_ADMIN_TOKEN is the placeholder {token!r}: set a real secret, or leave it empty")
        secret = self.secret_key.get_secret_value()
        if self.env == "production" and secret and secret in PLACEHOLDER_SECRETS:
            raise ValueError(f"LETHE_SECRET_KEY is the placeholder {secret!r}: set a real secret, or leave it empty")
        return self

    @property
    def admin_enabled(self) -> bool:
        """Admin endpoints stay off until a real admin token is set."""
        return self.admin_token.get_secret_value() not in PLACEHOLDER_SECRETS

    def as_environment(self) -> dict[str, str]:
        """These settings as the `LETHE_*` variables that reproduce them in a child process."""
        env = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, bool):
                value = "true" if value else "false"
            elif isinstance(value, dict | list):
                value = json.dumps(value)
            env[f"LETHE_{name.upper()}"] = str(value)
        return env


@lru_cache
def get_settings() -> Settings:
    return Settings()
