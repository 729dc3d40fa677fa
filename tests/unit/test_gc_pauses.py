"""The gateway's garbage-collection policy: what survives a slow full collection is frozen out of the next ones,
and thawed once a period, so a reference cycle that died while frozen is still freed."""

from __future__ import annotations

import gc
import logging
import weakref
from collections.abc import Iterator

import pytest

from api.gc_pauses import watch_gc


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_what_survives_a_slow_full_collection_is_frozen_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    kept: list[list[int]] = [[] for _ in range(1000)]
    stop = watch_gc(slow_seconds=0.0)  # every full collection counts as slow
    try:
        with caplog.at_level(logging.WARNING, logger="api.gc_pauses"):
            gc.collect()
    finally:
        stop()
    assert gc.get_freeze_count() >= len(kept)
    assert any("garbage collection of generation 2 paused the process" in r.message for r in caplog.records)


def test_a_cycle_that_died_while_frozen_is_freed_at_the_thaw() -> None:
    node = _Node()
    alive = weakref.ref(node)
    gc.collect()
    gc.freeze()
    del node
    stop = watch_gc(slow_seconds=60.0, thaw_seconds=3600.0)
    try:
        gc.collect()
        assert alive() is not None  # frozen: out of this collection's walk
    finally:
        stop()
    stop = watch_gc(slow_seconds=60.0, thaw_seconds=0.0)
    try:
        gc.collect()  # the period is over: thawed before the walk
    finally:
        stop()
    assert alive() is None
