"""The engine's tunables from Lethe's settings: the one place settings reach the mechanism."""

from __future__ import annotations

from config.settings import Settings
from engine.config import MechanismConfig

__all__ = ["mechanism_config"]


def mechanism_config(settings: Settings) -> MechanismConfig:
    return MechanismConfig(ceiling_tokens=settings.ceiling_tokens)
