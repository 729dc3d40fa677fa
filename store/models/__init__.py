"""Table rows. API shapes live in `api/schemas.py`; a row never leaves the store as it is."""

from store.models.base import Base
from store.models.conversation import Decoration, Memory, Message, OutboxEvent
from store.models.deployment import DeploymentSetting
from store.models.graph import Entity, EntityAlias, Passage
from store.models.mechanism import (
    BoundaryScore,
    Episode,
    EpisodeTransition,
    Fact,
    IdempotencyRecord,
    NoteCall,
    Trace,
)
from store.models.recall import RecallBlock, RecallWalk
from store.models.tenancy import ApiKey, SizeRatio, Tenant
from store.models.upstream import TenantUpstream
from store.models.usage import ModelUsage

__all__ = [
    "ApiKey",
    "Base",
    "BoundaryScore",
    "Decoration",
    "DeploymentSetting",
    "Entity",
    "EntityAlias",
    "Episode",
    "EpisodeTransition",
    "Fact",
    "IdempotencyRecord",
    "Memory",
    "Message",
    "ModelUsage",
    "NoteCall",
    "OutboxEvent",
    "Passage",
    "RecallBlock",
    "RecallWalk",
    "SizeRatio",
    "Tenant",
    "TenantUpstream",
    "Trace",
]
