"""The settings' groups, one per concern, each field read from the `LETHE_*` variable it always had.

A group's fields drop the group's prefix (`database.url`); `env_prefix` and `env_names` give back each
variable's name (`LETHE_DATABASE_URL`, `LETHE_DB_POOL_SIZE`), so operators' configuration never changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["DatabaseSettings", "GatewaySettings", "Group", "LimitsSettings", "MechanismSettings", "ModelSettings",
           "ObservabilitySettings", "PLACEHOLDER_SECRETS", "RecallSettings", "TemporalSettings", "WorkerSettings"]

PLACEHOLDER_SECRETS = {"", "changeme", "change-me", "secret"}

Level = Literal["tangential", "relevant", "central"]


class Group(BaseModel):
    # `model_cache` and the like are settings' names, not pydantic's.
    model_config = ConfigDict(protected_namespaces=())

    # A field's variable is LETHE_ + env_prefix + its name, unless env_names names it otherwise.
    env_prefix: ClassVar[str] = ""
    env_names: ClassVar[dict[str, str]] = {}

    @classmethod
    def flat_names(cls) -> dict[str, str]:
        """Each field's name as its variable spells it, without `LETHE_` and in lower case."""
        return {name: cls.env_names.get(name, cls.env_prefix + name) for name in cls.model_fields}


class DatabaseSettings(Group):
    """Postgres (with pgvector and pg_trgm)."""

    env_prefix = "db_"
    env_names = {"url": "database_url"}

    # Empty means the embedded server under data_dir (lethe dev only).
    url: str = ""
    pool_size: int = Field(default=10, ge=1)
    # How long a call waits for a free connection before it is answered 503 with Retry-After.
    pool_timeout_seconds: float = Field(default=10.0, gt=0)
    # The role the gateway and worker act as (`SET ROLE` on each connection), bound by row-level security;
    # empty when the URL already logs in as a member-free app role. Migrations create it (store/rls.py).
    role: str = "lethe_app"

    @field_validator("url")
    @classmethod
    def _asyncpg_driver(cls, value: str) -> str:
        # Operators paste plain postgres:// URLs; SQLAlchemy needs the async driver named.
        for prefix in ("postgres://", "postgresql://"):
            if value.startswith(prefix):
                return "postgresql+asyncpg://" + value[len(prefix):]
        return value


class TemporalSettings(Group):
    env_prefix = "temporal_"

    address: str = "localhost:7233"
    namespace: str = "default"
    task_queue: str = "lethe-memory"
    api_key: SecretStr | None = None
    tls: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_ca: Path | None = None
    ui_port: int = 8233
    # Where people open the Temporal UI (the inspector links each memory's workflow there); `lethe dev` sets it.
    ui_url: str = ""


class GatewaySettings(Group):
    env_names = {"shutdown_seconds": "gateway_shutdown_seconds"}

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    admin_token: SecretStr = SecretStr("")
    allow_clock_override: bool = False
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
    # What such a named upstream may be although private, loopback or link-local (refused otherwise): host names
    # and addresses or networks, comma-separated (`localhost,10.0.0.0/8`). `lethe dev` allows loopback.
    upstream_url_allow: str = ""
    # On SIGTERM the gateway stops taking connections and lets calls in flight (a streamed reply included) end
    # for at most this long; keep it under the pod's termination grace period.
    shutdown_seconds: float = Field(default=25.0, ge=0)

    @property
    def admin_enabled(self) -> bool:
        """Admin endpoints stay off until a real admin token is set."""
        return self.admin_token.get_secret_value() not in PLACEHOLDER_SECRETS


class WorkerSettings(Group):
    env_prefix = "worker_"

    # The worker answers /healthz and /readyz here for container probes (0 turns it off).
    health_port: int = Field(default=8081, ge=0, le=65535)
    # On SIGTERM running activities get this long to finish before they are cancelled (and retried by another
    # worker); keep it under the pod's termination grace period.
    graceful_shutdown_seconds: float = Field(default=50.0, ge=0)


class LimitsSettings(Group):
    """What one request or one tenant may take of a gateway process."""

    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    # A body that stops arriving for this long is answered 408 (a Content-Length larger than what is sent).
    body_idle_seconds: float = Field(default=10.0, gt=0)
    # Per tenant and per gateway process; 0 turns a limit off. Over it: 429 with Retry-After.
    tenant_rate_per_second: float = Field(default=0.0, ge=0)
    tenant_rate_burst: int = Field(default=0, ge=0)  # 0: twice the rate
    tenant_max_concurrent_decorates: int = Field(default=0, ge=0)


class MechanismSettings(Group):
    # The ceiling of a model without one of its own below, never more than the model's known window.
    ceiling_tokens: int = Field(default=200_000, ge=1000)
    # Ceilings of named models, taken as they are: `name=tokens`, comma-separated (`my-llama=8192,gpt-4.1=1000000`).
    model_ceilings: str = ""
    # An unanswered note ask shows as pending (LetheNoteAskPending) after this many calls or minutes.
    note_ask_pending_calls: int = Field(default=3, ge=1)
    note_ask_pending_minutes: float = Field(default=30.0, ge=0)
    # The idle gate (issue #37): a conversation of a user with no user message for this long hands its new
    # turns to the user's graph (LETHE_USER_IDLE_MINUTES).
    user_idle_minutes: float = Field(default=30.0, gt=0)
    # Claim kinds weigh in what stays in front of the model (engine.claims); off for comparison (LETHE_CLAIM_KINDS).
    claim_kinds: bool = True
    # Salience (engine/salience.py): off, every episode's encoding counts 1 and the lane judges no acts
    # (LETHE_SALIENCE).
    salience: bool = True

    @field_validator("model_ceilings")
    @classmethod
    def _model_ceilings_parse(cls, value: str) -> str:
        parse_model_ceilings(value)
        return value

    @property
    def model_ceiling_table(self) -> dict[str, int]:
        return parse_model_ceilings(self.model_ceilings)


def parse_model_ceilings(text: str) -> dict[str, int]:
    """`name=tokens,name=tokens` as a table; names lower-cased (matching ignores case)."""
    table: dict[str, int] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, sep, tokens = entry.rpartition("=")
        if not sep or not name.strip() or not tokens.strip().isdigit() or int(tokens) < 1000:
            raise ValueError(f"{entry!r} is not `model=tokens` with at least 1000 tokens")
        table[name.strip().lower()] = int(tokens)
    return table


class RecallSettings(Group):
    """On or off (off, decorate is exactly what it was without recall); how long the hot path's walk may take
    before the search hits are used as they are; the recall block's most tokens; the walk's levels."""

    env_prefix = "recall_"
    env_names = {"enabled": "recall"}

    enabled: bool = True
    inline_deadline_ms: int = Field(default=150, ge=0)
    block_tokens: int = Field(default=1200, ge=100)
    question_block_tokens: int = Field(default=2400, ge=100)
    keep_level: Level = "relevant"
    lead_on_level: Level = "relevant"
    # What may enter a block unrated (engine/recall/floor.py): a hit's fused score against the best of its batch,
    # and the cosine similarity to the message that counts as touching the memory at all, or the lower one that
    # does when the nearest leads the next by `stand_out_lead`.
    score_floor: float = Field(default=0.5, ge=0.0, le=1.0)
    touch_similarity: float = Field(default=0.35, ge=-1.0, le=1.0)
    stand_out_similarity: float = Field(default=0.28, ge=-1.0, le=1.0)
    stand_out_lead: float = Field(default=0.03, ge=0.0, le=2.0)


class ModelSettings(Group):
    """The embedder and the judge, local or OpenAI-compatible, and the word indexes' language."""

    env_names = {"cache": "model_cache"}

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
    cache: Path | None = None
    # The Postgres text search configuration for the word indexes of facts and passages (`simple` keeps every
    # word as written, in any language; `english` stems). Changing it applies to what is indexed afterwards.
    search_language: str = Field(default="simple", pattern=r"^[a-z_]{1,63}$")


class ObservabilitySettings(Group):
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = True
    otlp_endpoint: str = ""
    # Spans printed to stderr, for looking at traces without a collector (lethe dev).
    trace_console: bool = False
