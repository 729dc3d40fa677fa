"""Table rows. API shapes live in `api/schemas.py`; a row never leaves the store as it is."""

from store.models.base import Base
from store.models.conversation import DecorationRow, MemoryRow, MessageRow, OutboxEventRow, ReplacedMessageRow
from store.models.deployment import DeploymentSettingRow
from store.models.graph import EntityAliasRow, EntityRow, PassageRow
from store.models.mechanism import (
    BoundaryScoreRow,
    EpisodeRow,
    EpisodeTransitionRow,
    FactRow,
    IdempotencyRow,
    NoteCallRow,
    TraceRow,
)
from store.models.recall import RecallBlockRow, RecallWalkRow
from store.models.tenancy import ApiKeyRow, ModelCeilingRow, SizeRatioRow, TenantRow
from store.models.upstream import TenantUpstreamRow
from store.models.users import SourceProfileRow, UserRow

__all__ = [
    "ApiKeyRow",
    "Base",
    "BoundaryScoreRow",
    "DecorationRow",
    "DeploymentSettingRow",
    "EntityRow",
    "EntityAliasRow",
    "EpisodeRow",
    "EpisodeTransitionRow",
    "FactRow",
    "IdempotencyRow",
    "MemoryRow",
    "MessageRow",
    "ModelCeilingRow",
    "NoteCallRow",
    "OutboxEventRow",
    "PassageRow",
    "RecallBlockRow",
    "ReplacedMessageRow",
    "RecallWalkRow",
    "SizeRatioRow",
    "SourceProfileRow",
    "TenantRow",
    "TenantUpstreamRow",
    "TraceRow",
    "UserRow",
]
