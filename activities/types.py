"""The lane's argument and result types, kept for importers of this path: they are defined in
`engine.lane_types`, since the workflow may import only the engine."""

from __future__ import annotations

from engine.lane_types import *  # noqa: F403
from engine.lane_types import __all__  # noqa: F401
