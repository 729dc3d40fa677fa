"""What the hot path needs, built once per process: the database, token counter and mechanism numbers.

The hot path never scores boundaries (docs/cutting.md); its judge and embedder serve recall only."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.config import MechanismConfig
from providers.tokens import TokenCounter
from recall.find import Recaller
from service.ceilings import TenantCeilings
from service.memory_cache import MemoryCache
from store.db import Database

__all__ = ["HotPath"]


@dataclass(frozen=True)
class HotPath:
    db: Database
    counter: TokenCounter
    config: MechanismConfig
    # What recent decorates loaded of their memories, reused while it is still true.
    memory_cache: MemoryCache = field(default_factory=MemoryCache)
    # Tenants' own ceilings per model, read every few seconds at most.
    ceilings: TenantCeilings = field(default_factory=TenantCeilings)
    # Recall for new user messages; None when it is off.
    recaller: Recaller | None = None

    def text_counter(self, model: str | None) -> Callable[[str], int]:
        return lambda text: self.counter.count_text(text, model=model)

    def message_tokens(self, message: dict[str, Any], model: str | None) -> int:
        # The same JSON the engine measures the rest of the request by, so sizes add up consistently.
        return self.counter.count_text(json.dumps(message, ensure_ascii=False, default=str), model=model)
