"""A memory rebuilt from its export: the head's columns, then each section's rows under new row ids, every
reference between rows (foreign keys, the id lists of recall blocks and walks) carried over to the new ids.

Vectors and word indexes are not in an export (they derive from the text beside them). The import writes a
plain word index for every fact and passage that had one, so they are found by words at once; the memory's lane
(`activities.graph`) embeds what an import left without a vector and indexes its words in the deployment's
language (`store.repositories.vectors`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import DateTime, cast, func, insert, select, update
from sqlalchemy.dialects.postgresql import REGCONFIG
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import Conflict, InvalidInput
from contracts.times import parse_time
from store.models import FactRow, MemoryRow
from store.repositories.export import SECTIONS
from store.repositories.fact_edits import FORGOTTEN

log = logging.getLogger(__name__)

__all__ = ["HEAD_SKIPPED", "IMPORT_ORDER", "Imported", "checked_head", "checked_rows", "import_rows", "make_memory",
           "rebuild_memory"]

# Referenced rows first: what points at a row is written after it.
IMPORT_ORDER = ("note_calls", "entities", "entity_aliases", "facts", "passages", "messages", "replaced_messages",
                "decorations", "episodes", "episode_transitions", "traces", "boundary_scores", "recall_blocks",
                "recall_walks", "tone_baselines")
# The head's columns an import does not take from the document: the row's own keys and the user binding (an
# imported memory belongs to no one until a call names its user).
HEAD_SKIPPED = ("id", "tenant_id", "memory_id", "user_pk", "kind")
_SKIPPED = ("memory_pk", "tenant_id", "embedding", "words")
BATCH = 500


@dataclass
class Imported:
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, dict[int, int]] = field(default_factory=dict)  # section -> old row id -> new


def _columns(table: Any, skipped: Sequence[str]) -> dict[str, Any]:
    return {c.key: c for c in table.columns if c.key not in skipped}


def _value(where: str, column: Any, value: Any) -> Any:
    """The document's value as the column takes it: JSON has no times, so times come as text."""
    if value is None:
        if not column.nullable and column.default is None and column.server_default is None:
            raise InvalidInput(f"{where}: must not be null", field=where)
        return None
    if isinstance(column.type, DateTime):
        return parse_time(value, where)
    try:
        expected = column.type.python_type
    except NotImplementedError:
        return value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is int and isinstance(value, bool) or not isinstance(value, expected):
        raise InvalidInput(f"{where}: must be {expected.__name__}", field=where)
    if expected is list and not all(isinstance(item, (str, int)) for item in value):
        raise InvalidInput(f"{where}: must be a list of ids or keys", field=where)
    return value


def checked_rows(name: str, rows: Any) -> list[dict[str, Any]]:
    """The section's rows, each field checked against its column (a 422 names `section[i].field`)."""
    if not isinstance(rows, list):
        raise InvalidInput(f"{name}: must be a list of rows", field=name)
    table = SECTIONS[name][0].__table__
    columns = _columns(table, _SKIPPED)
    required = [key for key, c in columns.items()
                if not c.nullable and c.default is None and c.server_default is None and not
                (c.primary_key and c.identity is not None)]
    out = []
    for i, row in enumerate(rows):
        where = f"{name}[{i}]"
        if not isinstance(row, dict):
            raise InvalidInput(f"{where}: must be an object", field=where)
        for key in row:
            if key not in columns:
                raise InvalidInput(f"{where}.{key}: not a column of {name}", field=f"{where}.{key}")
        for key in required:
            if key not in row:
                raise InvalidInput(f"{where}.{key}: required", field=f"{where}.{key}")
        out.append({key: _value(f"{where}.{key}", columns[key], value) for key, value in row.items()})
    return out


def checked_head(head: Any) -> dict[str, Any]:
    if not isinstance(head, dict):
        raise InvalidInput("memory: must be an object (the export's head)", field="memory")
    columns = _columns(MemoryRow.__table__, ())
    out = {}
    for key, value in head.items():
        if key not in columns:
            raise InvalidInput(f"memory.{key}: not a column of a memory", field=f"memory.{key}")
        if key not in HEAD_SKIPPED:
            out[key] = _value(f"memory.{key}", columns[key], value)
    if head.get("kind", "conversation") != "conversation":
        raise InvalidInput("memory.kind: only a conversation's export can be imported", field="memory.kind")
    return out


async def rebuild_memory(session: AsyncSession, *, tenant_id: str, memory_id: str, head: Mapping[str, Any],
                         sections: Mapping[str, list[dict[str, Any]]]) -> Imported:
    """The memory made from the head, then its rows; what the database refuses is said for the document."""
    try:
        pk = await make_memory(session, tenant_id=tenant_id, memory_id=memory_id, head=head)
        return await import_rows(session, tenant_id=tenant_id, memory_pk=pk, sections=sections)
    except IntegrityError as exc:
        raise _refused(exc) from exc


async def make_memory(session: AsyncSession, *, tenant_id: str, memory_id: str, head: Mapping[str, Any]) -> int:
    return int((await session.execute(insert(MemoryRow).values(
        tenant_id=tenant_id, memory_id=memory_id, **head).returning(MemoryRow.id))).scalar_one())


def _mapped(ids: Mapping[int, int], value: Any) -> Any:
    return ids.get(value, value) if isinstance(value, int) else value


def _all(ids: Mapping[int, int], values: list[Any] | None) -> list[Any] | None:
    return None if values is None else [_mapped(ids, value) for value in values]


def _items(items: Any, facts: Mapping[int, int], passages: Mapping[int, int]) -> Any:
    """A recall block's items with their ids carried over; an item from the user's graph keeps its own."""
    if not isinstance(items, list):
        return items
    out = []
    for item in items:
        if isinstance(item, dict) and not item.get("elsewhere"):
            ids = facts if item.get("kind") == "fact" else passages
            item = {**item, "id": _mapped(ids, item.get("id"))}
            if isinstance(item.get("since"), list):
                item["since"] = _items(item["since"], facts, passages)
        out.append(item)
    return out


async def import_rows(session: AsyncSession, *, tenant_id: str, memory_pk: int,
                      sections: Mapping[str, list[dict[str, Any]]]) -> Imported:
    """Write every section's rows into the new memory, in `IMPORT_ORDER`, references carried to the new ids."""
    done = Imported()
    ids = done.ids
    origins = await _origin_pks(session, tenant_id, sections)
    remaps: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "entity_aliases": lambda r: {**r, "entity_id": _mapped(ids["entities"], r.get("entity_id"))},
        "facts": lambda r: {**r, "note_call_id": _mapped(ids["note_calls"], r.get("note_call_id")),
                            "subject_entity_id": _mapped(ids["entities"], r.get("subject_entity_id")),
                            "object_entity_id": _mapped(ids["entities"], r.get("object_entity_id")),
                            "origin_memory_pk": origins.get(r.get("origin_memory_id") or "")},
        "passages": lambda r: {**r, "origin_memory_pk": origins.get(r.get("origin_memory_id") or "")},
        "recall_blocks": lambda r: {
            **r, **{k: _all(ids["facts"], r.get(k)) for k in ("fact_ids", "distilled_fact_ids")},
            **{k: _all(ids["passages"], r.get(k)) for k in ("passage_ids", "distilled_passage_ids")},
            "items": _items(r.get("items"), ids["facts"], ids["passages"])},
        "recall_walks": lambda r: {**r, "levels": [[_mapped(ids["facts"], pair[0]), *pair[1:]]
                                                   for pair in r.get("levels") or [] if isinstance(pair, list)]},
    }
    for name in IMPORT_ORDER:
        model = SECTIONS[name][0]
        rows = sections.get(name, [])
        has_id = "id" in model.__table__.columns and model.__table__.columns["id"].identity is not None
        ids[name] = {}
        for start in range(0, len(rows), BATCH):
            batch = rows[start:start + BATCH]
            values = [{**{k: v for k, v in remaps.get(name, dict)(row).items() if not (has_id and k == "id")},
                       "tenant_id": tenant_id, "memory_pk": memory_pk, **_words(name, row)} for row in batch]
            if has_id:
                new = (await session.execute(insert(model).values(values).returning(model.id))).scalars().all()
                ids[name].update({int(row["id"]): int(pk) for row, pk in zip(batch, new, strict=True) if "id" in row})
            else:
                await session.execute(insert(model).values(values))
        done.counts[name] = len(rows)
    await _word_indexes(session, tenant_id, memory_pk, "simple")
    return done


def _words(section: str, row: Mapping[str, Any]) -> dict[str, Any]:
    # A passage always has its word index (the column requires one); facts get theirs below, where due.
    if section != "passages":
        return {}
    return {"words": func.to_tsvector(cast("simple", REGCONFIG), str(row.get("text") or "").replace("\x00", " "))}


async def _origin_pks(session: AsyncSession, tenant_id: str, sections: Mapping[str, list[dict[str, Any]]]
                      ) -> dict[str, int]:
    """The memories this tenant still holds that facts and passages say they came from."""
    names = {row.get("origin_memory_id") for name in ("facts", "passages") for row in sections.get(name, [])}
    names.discard(None)
    if not names:
        return {}
    rows = await session.execute(select(MemoryRow.memory_id, MemoryRow.id).where(
        MemoryRow.tenant_id == tenant_id, MemoryRow.memory_id.in_(names)))
    return {memory_id: pk for memory_id, pk in rows}


async def _word_indexes(session: AsyncSession, tenant_id: str, memory_pk: int, language: str) -> None:
    """The word index of every integrated fact still searchable (not forgotten, nor retired by a forgotten one:
    those were taken out of every search)."""
    forgotten = select(FactRow.fact_key).where(FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk,
                                               FactRow.retired_by == FORGOTTEN)
    await session.execute(update(FactRow).where(
        FactRow.tenant_id == tenant_id, FactRow.memory_pk == memory_pk, FactRow.integrated_at.is_not(None),
        FactRow.retired_by.is_distinct_from(FORGOTTEN), ~func.coalesce(FactRow.retired_by, "").in_(forgotten),
    ).values(words=func.to_tsvector(cast(language, REGCONFIG), FactRow.note)))


def _refused(exc: IntegrityError) -> Conflict | InvalidInput:
    """What the database refused, said for the document: a row key held elsewhere, or rows that do not fit."""
    cause = exc.orig.__cause__ if exc.orig is not None and exc.orig.__cause__ is not None else exc.orig
    if getattr(cause, "sqlstate", None) == "23505":
        # Keys unique across memories (a decorate's id): the memory exported is still held.
        return Conflict("the document's rows are still held by another memory (the one exported?): erase it "
                        "first, or import a document of a memory this deployment no longer holds")
    table, column = getattr(cause, "table_name", None), getattr(cause, "column_name", None)
    where = ".".join(part for part in (table, column) if part) or "body"
    log.info("import refused", extra={"reason": str(cause)})
    return InvalidInput(f"{where}: the document is not an export this deployment can rebuild ({cause})",
                        field=where)
