"""The garbage collector's pauses, kept short and watched. A collection of the oldest generation walks every
object the process holds and stops every call in flight meanwhile. Most of those objects are the libraries'
(modules, classes, functions: about 200,000 once the gateway has started, a quarter of a second to walk on this
project's 2-core machines) and live as long as the process: `freeze_startup` takes them out of every later walk.

Each collection's time goes to the `lethe_gc_pause_seconds` histogram; one over `SLOW_SECONDS` is logged, so a
slow call can be told apart from a slow collection.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import Histogram

__all__ = ["SLOW_SECONDS", "freeze_startup", "watch_gc"]

log = logging.getLogger(__name__)

SLOW_SECONDS = 0.1
PAUSES = Histogram("lethe_gc_pause_seconds", "Time the garbage collector stopped the process, per collection",
                   ["generation"], buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5))


def watch_gc() -> Callable[[], None]:
    """Time every collection from now on; returns how to stop."""
    started = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
            return
        elapsed = time.perf_counter() - started[0]
        generation = info.get("generation", -1)
        PAUSES.labels(str(generation)).observe(elapsed)
        if elapsed > SLOW_SECONDS:
            log.warning("garbage collection of generation %s paused the process %.0f ms (%s objects freed)",
                        generation, elapsed * 1000, info.get("collected"),
                        extra={"gc_generation": generation, "gc_pause_ms": round(elapsed * 1000, 1)})

    gc.callbacks.append(callback)
    return lambda: gc.callbacks.remove(callback)


def freeze_startup() -> None:
    """Call once started (imports done, the app built): what is alive now is kept out of every later collection.
    An object frozen here that later becomes garbage in a reference cycle is never freed; what lives this long
    is the libraries' and the app's, which the process keeps anyway."""
    gc.collect()
    gc.freeze()
