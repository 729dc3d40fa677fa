"""The lane's recall jobs, as Temporal activities: prepare the walk for the next user message after each reply
(`recall.prepare`), and distill the last turn's recall block once the next user message has arrived
(`recall.distill`). Each opens its job's span and leaves the work to the `recall` package."""

from __future__ import annotations

from dataclasses import dataclass, field

from temporalio import activity

from activities.idle import IdleActivities
from activities.tracing import job_span
from contracts.lane_types import JobInput
from providers.embedder import Embedder
from providers.judge import Judge
from recall.config import RecallConfig
from recall.distill import distill_blocks
from recall.prepare import prepare_walk
from store.db import Database

__all__ = ["RecallActivities"]


@dataclass
class RecallActivities:
    """Registered bound, beside the lane's: the worker owns the pool, the judge and the embedder."""

    db: Database
    judge: Judge
    embedder: Embedder
    config: RecallConfig = field(default_factory=RecallConfig)

    def all(self) -> list[object]:
        # The idle gate rides with recall's jobs: it needs the same embedder, and feeds recall across conversations.
        gate = IdleActivities(self.db, self.embedder, language=self.config.language, judge=self.judge)
        return [self.prepare_recall, self.distill_recall, *gate.all()]

    @activity.defn
    async def prepare_recall(self, params: JobInput) -> int:
        """After a reply: walk from the memory's latest turn for the next message to find ready. Returns how
        many facts it rated (`recall.prepare.prepare_walk`)."""
        memory = params.memory
        with job_span("prepare_recall", memory.tenant_id, params.event):
            return await prepare_walk(self.db, self.judge, self.embedder, self.config, tenant_id=memory.tenant_id,
                                      memory_id=memory.memory_id, log=activity.logger)

    @activity.defn
    async def distill_recall(self, params: JobInput) -> int:
        """Once a later user message has arrived: distill each earlier turn's block not yet distilled. Returns
        how many blocks it distilled (`recall.distill.distill_blocks`)."""
        memory = params.memory
        with job_span("distill_recall", memory.tenant_id, params.event):
            return await distill_blocks(self.db, self.judge, self.config, tenant_id=memory.tenant_id,
                                        memory_id=memory.memory_id, log=activity.logger)
