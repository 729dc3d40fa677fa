"""The garbage collector's pauses, kept short and watched.

A collection of the oldest generation walks every object the process holds and stops every call in flight
meanwhile. Most of those objects live as long as the process: the libraries' (modules, classes, functions: about
200,000 once the gateway has started, a quarter of a second to walk on this project's 2-core machines) and the
memory cache's histories (half a second more at 100,000 cached messages). So:

- `freeze_startup` takes what is alive once the process has started out of every later walk (`gc.freeze`);
- a full collection that took over `SLOW_SECONDS` freezes what survived it, so the next ones walk only what came
  since;
- once every `THAW_SECONDS` the frozen objects join a full collection again (`gc.unfreeze`): one that was alive
  when frozen and has since died in a reference cycle (a request's session, in flight at that moment) is freed
  then, so what such cycles hold is kept at most that long. That collection is the one long pause of the period.

Each collection's time goes to the `lethe_gc_pause_seconds` histogram; one over `SLOW_SECONDS` is logged, so a slow
call can be told apart from a slow collection.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import Histogram

__all__ = ["SLOW_SECONDS", "THAW_SECONDS", "freeze_startup", "watch_gc"]

log = logging.getLogger(__name__)

SLOW_SECONDS = 0.1
THAW_SECONDS = 3600.0
PAUSES = Histogram("lethe_gc_pause_seconds", "Time the garbage collector stopped the process, per collection",
                   ["generation"], buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
_OLDEST = 2


def watch_gc(*, slow_seconds: float = SLOW_SECONDS, thaw_seconds: float = THAW_SECONDS) -> Callable[[], None]:
    """Time every collection from now on, freeze what survives a full one slower than `slow_seconds`, and thaw
    every `thaw_seconds`; returns how to stop."""
    state = {"started": 0.0, "thawed": time.monotonic()}

    def callback(phase: str, info: dict[str, Any]) -> None:
        generation = info.get("generation", -1)
        if phase == "start":
            if generation == _OLDEST and time.monotonic() - state["thawed"] > thaw_seconds:
                # Before the walk starts: this collection walks the frozen objects too.
                gc.unfreeze()
                state["thawed"] = time.monotonic()
            state["started"] = time.perf_counter()
            return
        elapsed = time.perf_counter() - state["started"]
        PAUSES.labels(str(generation)).observe(elapsed)
        if elapsed <= slow_seconds:
            return
        log.warning("garbage collection of generation %s paused the process %.0f ms (%s objects freed)",
                    generation, elapsed * 1000, info.get("collected"),
                    extra={"gc_generation": generation, "gc_pause_ms": round(elapsed * 1000, 1)})
        if generation == _OLDEST:
            gc.freeze()  # just collected: what is left is alive

    gc.callbacks.append(callback)
    return lambda: gc.callbacks.remove(callback)


def freeze_startup() -> None:
    """Call once started (imports done, the app built): what is alive now is kept out of later collections until
    the next thaw (what lives this long is the libraries' and the app's, which the process keeps anyway)."""
    gc.collect()
    gc.freeze()
