"""The engine's tunables from Lethe's settings: the one place settings reach the mechanism."""

from __future__ import annotations

from datetime import timedelta

from config.settings import Settings
from engine.config import MechanismConfig
from engine.context_windows import KNOWN_CONTEXT_WINDOWS
from engine.recall.walk import CENTRAL, RELEVANT, TANGENTIAL, UNRELATED

__all__ = ["mechanism_config"]


_LEVELS = {"unrelated": UNRELATED, "tangential": TANGENTIAL, "relevant": RELEVANT, "central": CENTRAL}


def mechanism_config(settings: Settings) -> MechanismConfig:
    ceiling = settings.mechanism.ceiling_tokens
    # Known windows only ever lower the configured ceiling; ceilings named in the settings are taken as they are.
    # (Every family is kept, capped: gpt-4.1 must not fall back to gpt-4's 8k.)
    known = {name: min(window, ceiling) for name, window in KNOWN_CONTEXT_WINDOWS.items()}
    return MechanismConfig(
        ceiling_tokens=ceiling, model_ceilings=tuple(sorted(settings.mechanism.model_ceiling_table.items())),
        known_ceilings=tuple(sorted(known.items())),
        recall_block_tokens=settings.recall.block_tokens,
        recall_question_block_tokens=settings.recall.question_block_tokens,
        recall_keep_level=_LEVELS[settings.recall.keep_level],
        recall_lead_on_level=_LEVELS[settings.recall.lead_on_level],
        claim_kinds=settings.mechanism.claim_kinds,
        salience=settings.mechanism.salience,
        user_idle=timedelta(minutes=settings.mechanism.user_idle_minutes),
    )
