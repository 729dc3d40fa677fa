"""The engine's tunables from Lethe's settings: the one place settings reach the mechanism."""

from __future__ import annotations

from config.settings import Settings
from engine.config import MechanismConfig
from engine.recall.walk import CENTRAL, RELEVANT, TANGENTIAL, UNRELATED

__all__ = ["mechanism_config"]


_LEVELS = {"unrelated": UNRELATED, "tangential": TANGENTIAL, "relevant": RELEVANT, "central": CENTRAL}


def mechanism_config(settings: Settings) -> MechanismConfig:
    return MechanismConfig(
        ceiling_tokens=settings.mechanism.ceiling_tokens, recall_block_tokens=settings.recall.block_tokens,
        recall_question_block_tokens=settings.recall.question_block_tokens,
        recall_keep_level=_LEVELS[settings.recall.keep_level],
        recall_lead_on_level=_LEVELS[settings.recall.lead_on_level],
    )
