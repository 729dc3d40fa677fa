"""The searchable views of facts and passages (migration 0014): the columns recall's searches read, of the bound
tenant's rows only (store/rls.py says why the searches do not read the tables). Each column is its table's own,
type and all. Kept out of `Base.metadata`: the migration makes the views, nothing creates them as tables.

A column added here needs a migration that redefines its view."""

from __future__ import annotations

from sqlalchemy import Column, MetaData, Table

from store.models.graph import PassageRow
from store.models.mechanism import FactRow

__all__ = ["VIEWS", "SearchableFact", "SearchablePassage"]

_views = MetaData()
_COMMON = ("id", "tenant_id", "memory_pk", "words", "embedding", "at")


def _view(name: str, table: Table, *columns: str) -> Table:
    return Table(name, _views, *(Column(c, table.c[c].type, primary_key=c == "id") for c in (*_COMMON, *columns)),
                 info={"table": table.name})


SearchableFact = _view("searchable_facts", FactRow.__table__, "note", "merged_into", "integrated_at")
SearchablePassage = _view("searchable_passages", PassageRow.__table__, "text")
VIEWS = (SearchableFact, SearchablePassage)
