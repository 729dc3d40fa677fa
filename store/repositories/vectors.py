"""Rows an import left without their vector: facts and passages that have a word index but no embedding, and
entities with none. In ordinary life every such row gets both at once; only an import writes one without the
other (`store.repositories.memory_import`), and the lane fills them in here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import cast, func, select, update
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import EntityRow, FactRow, PassageRow

__all__ = ["VECTORED", "missing_vectors", "set_vectors"]

# What has a vector, and the text it is made of.
VECTORED: dict[str, tuple[Any, Any]] = {
    "facts": (FactRow, FactRow.note),
    "entities": (EntityRow, EntityRow.name),
    "passages": (PassageRow, PassageRow.text),
}


async def missing_vectors(session: AsyncSession, *, tenant_id: str, memory_pk: int, table: str, limit: int
                          ) -> list[tuple[int, str]]:
    model, text = VECTORED[table]
    query = select(model.id, text).where(model.tenant_id == tenant_id, model.memory_pk == memory_pk,
                                         model.embedding.is_(None))
    if table != "entities":
        query = query.where(model.words.is_not(None))  # forgotten ones have neither, and stay so
    return [(int(i), str(t)) for i, t in (await session.execute(query.order_by(model.id).limit(limit))).all()]


async def set_vectors(session: AsyncSession, *, tenant_id: str, table: str, ids: Sequence[int],
                      vectors: Any, language: str) -> None:
    """Each row's vector, and its word index again in the lane's language (the import wrote a plain one)."""
    model, text = VECTORED[table]
    words = {} if table == "entities" else {
        "words": func.to_tsvector(cast(language, REGCONFIG), text)}
    for row_id, vector in zip(ids, vectors, strict=True):
        await session.execute(update(model).where(model.tenant_id == tenant_id, model.id == row_id)
                              .values(embedding=np.asarray(vector, dtype=np.float32).tolist(), **words))
