"""The embedded model's precision, settled once per database for the gateway and the worker.

int8 and float32 give different vectors, and one database must hold one kind: a search compares a new vector
with every stored one. So the first process to start records the precision it embeds in (`auto`: the faster on
its machine, providers/precision.py) and every later one uses the record, on whatever machine it runs. An
explicit `LETHE_EMBEDDER_PRECISION` that disagrees with the record is refused at start, not obeyed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import cast

from config.groups import DatabaseSettings, ModelSettings
from contracts.errors import InvalidInput
from providers.precision import PRECISIONS, Precision, machine_preference
from store.db import Database, StoreSession
from store.repositories import deployment

__all__ = ["local_precision", "settle_precision", "settled", "settled_apart"]

log = logging.getLogger(__name__)


def local_precision(settings: ModelSettings) -> Precision:
    """The precision this process embeds in when no database settles it (tests, benches): the setting, or with
    `auto` this machine's preference."""
    if settings.embedder_precision != "auto":
        return settings.embedder_precision
    if settings.embedder != "local":
        return "int8"  # not used: a remote embedder has no precision of ours
    preference = machine_preference(threads=settings.onnx_threads, model_cache=settings.cache)
    return preference.choice if preference is not None else "int8"


async def settle_precision(db: Database, *, wanted: str, prefer: Callable[[bool], Precision | None]) -> Precision:
    """The precision the database records, recording `wanted` (or with `auto`, what `prefer(True)` measures)
    when nothing is recorded yet. Refuses an explicit `wanted` that disagrees with the record. Once a record
    exists, this machine's preference is only read where already known (`prefer(False)`): timing both models
    costs a second and their memory at every start, for a log line."""

    async def read(session: StoreSession) -> str | None:
        return await deployment.recorded(session, key=deployment.EMBEDDER_PRECISION)

    found = await db.transact(read)
    preferred: Precision | None = None
    if found is None:
        if wanted == "auto":
            preferred = await asyncio.to_thread(prefer, True)
        choice = preferred or wanted

        async def write(session: StoreSession) -> str:
            return await deployment.record(session, key=deployment.EMBEDDER_PRECISION, value=choice)

        found = await db.transact(write)
        if found == choice:
            log.info("embedder precision %s recorded for this database", found, extra={"precision": found})
    if found not in PRECISIONS:
        raise InvalidInput(f"the database records embedder precision {found!r}, which this Lethe does not know",
                           field="embedder_precision")
    if wanted not in ("auto", found):
        raise InvalidInput(
            f"LETHE_EMBEDDER_PRECISION is {wanted}, but this database records {found}: its vectors were embedded "
            f"in {found}, and vectors of the two do not compare. Unset LETHE_EMBEDDER_PRECISION (or set it to auto "
            f"or {found}) to use the recorded one; changing it means embedding every stored vector again.",
            field="embedder_precision")
    if wanted == "auto":
        preferred = preferred or await asyncio.to_thread(prefer, False)
        if preferred is not None and preferred != found:
            log.info("embedder precision %s, as this database records; this machine would have preferred %s",
                     found, preferred, extra={"precision": found, "precision_preferred": preferred})
    return cast(Precision, found)


async def settled(settings: ModelSettings, db: Database) -> ModelSettings:
    """The models' `settings` with the precision the database records (recording it first when none is);
    unchanged for a remote embedder."""
    if settings.embedder != "local":
        return settings

    def prefer(measure_now: bool) -> Precision | None:
        preference = machine_preference(threads=settings.onnx_threads, model_cache=settings.cache,
                                        measure_now=measure_now)
        return None if preference is None else preference.choice

    precision = await settle_precision(db, wanted=settings.embedder_precision, prefer=prefer)
    return settings.model_copy(update={"embedder_precision": precision})


def settled_apart(settings: ModelSettings, database: DatabaseSettings) -> ModelSettings:
    """`settled` for a caller that is not async, or is inside a running loop (the gateway is built so by
    `lethe gateway` and `lethe dev`): a short-lived pool on a thread and loop of its own."""
    if settings.embedder != "local":
        return settings

    async def run() -> ModelSettings:
        db = Database(database.url, pool_size=1, role=database.role or None)
        try:
            return await settled(settings, db)
        finally:
            await db.dispose()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="lethe-precision") as pool:
        return pool.submit(asyncio.run, run()).result()
