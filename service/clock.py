"""The request's time: the server's, or `X-Lethe-Now` where the deployment allows it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from contracts.errors import InvalidInput

__all__ = ["Clock"]


@dataclass(frozen=True)
class Clock:
    now: datetime
    overridden: bool = False

    def advance(self, latest_at: datetime | None) -> datetime:
        """The request's time for a memory whose latest time is `latest_at`: a memory's time never goes
        backwards, and an override that would is refused."""
        if latest_at is not None and self.now < latest_at:
            if self.overridden:
                raise InvalidInput(
                    f"X-Lethe-Now {self.now.isoformat()} is before this memory's latest time "
                    f"{latest_at.isoformat()}",
                    field="X-Lethe-Now",
                )
            return latest_at  # a replica's clock slightly behind another's
        return self.now
