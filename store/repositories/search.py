"""Passages and the searches over facts and passages: by words (full text, plus trigrams so an identifier is
found by its exact form), by meaning (HNSW over the embeddings), and both fused by reciprocal rank.

Recall builds on these; they only rank, never decide what the model sees.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

import numpy as np
from sqlalchemy import Select, and_, bindparam, case, cast, exists, func, literal, or_, select, union_all
from sqlalchemy.dialects.postgresql import REGCONFIG, insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.passages import PassageText
from store.models import EpisodeRow, PassageRow
from store.models.searchable import SearchableFact, SearchablePassage
from store.query_vectors import query_vector

__all__ = [
    "episodes_to_index",
    "insert_passages",
    "nearest_by_meaning",
    "ranked_by_meaning",
    "ranked_by_words",
]

Kind = Literal["facts", "passages"]
# An identifier: letters with digits, underscores, dots or dashes (ORD-55120, db-kestrel-9, flag_checkout_v3).
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)+|[A-Za-z]*\d[A-Za-z0-9]*")
# Shorter ones ("5", "v2") count as words only: an exact match of "5" would lift every note holding a 5.
_IDENTIFIER_MIN = 3
# The most matches a search by words ranks: ranking reads each match's words, and a query matching more is
# generic in this memory, so its best hits are taken among the first matches found.
RANKED_MATCHES = 100
# The words a match is ranked by: the longest of the query's, which tell the most. ts_rank weighs how near each
# pair of a query's words stand, for every place each stands: a sentence every passage repeats (boilerplate, a
# template) costs a hundred microseconds a passage when ranked by all of its words, five times what its eight
# longest cost. The match itself still needs every word.
RANK_WORDS = 8


async def episodes_to_index(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> list[tuple[str, int, int]]:
    """(key, first seq, last seq) of sealed or forgotten episodes that have no passages yet."""
    rows = await session.execute(
        select(EpisodeRow.episode_key, EpisodeRow.first_seq, EpisodeRow.last_seq)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.state.in_(["sealed", "forgotten"]),
               ~exists().where(PassageRow.memory_pk == memory_pk, PassageRow.episode_key == EpisodeRow.episode_key))
        .order_by(EpisodeRow.first_seq)
    )
    return [(key, first, last) for key, first, last in rows]


async def insert_passages(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, episode_key: str, passages: Sequence[PassageText],
    vectors: Any, at: datetime, language: str,
) -> int:
    if not passages:
        return 0
    values = [
        {"memory_pk": memory_pk, "tenant_id": tenant_id, "episode_key": episode_key, "ordinal": p.ordinal,
         "first_seq": p.first_seq, "last_seq": p.last_seq, "first_turn": p.first_turn, "last_turn": p.last_turn,
         "text": p.text, "words": func.to_tsvector(cast(language, REGCONFIG), p.text.replace("\x00", " ")),
         "embedding": np.asarray(v, dtype=np.float32).tolist(), "at": at}
        for p, v in zip(passages, vectors, strict=True)
    ]
    result = await session.execute(
        insert(PassageRow).values(values)
        .on_conflict_do_nothing(index_elements=["memory_pk", "episode_key", "ordinal"]).returning(PassageRow.id)
    )
    return len(result.all())


def _table(kind: Kind) -> tuple[Any, Any, Any]:
    """What a search reads: the searchable view (store/rls.py: the tenant wall without keeping the word index
    out), its text, and which rows are live."""
    if kind == "facts":
        view = SearchableFact.c
        return view, view.note, and_(view.merged_into.is_(None), view.integrated_at.is_not(None))
    return SearchablePassage.c, SearchablePassage.c.text, literal(True)


@functools.cache
def _words_statement(kind: Kind, identifiers: int, prefix: str = "") -> Select[Any]:
    """The search by words for a number of identifiers, built once (its values are bound at each call): building
    a statement is Python work the hot path would otherwise pay for every search, about as much as the query.
    `prefix` names its query's parameters, so several searches can share one statement (`ranked_by_words`)."""
    model, text_column, live = _table(kind)
    language = cast(bindparam("language"), REGCONFIG)
    # Every word of the query once: a message repeats its words ("the" a dozen times), and the index pays for each
    # repeat without the match changing. Plain words, as the words of a message are meant: no search operators.
    query_lexemes = func.tsvector_to_array(func.to_tsvector(language, bindparam(f"{prefix}query")))
    words = func.array_to_string(query_lexemes, " ")
    # Each query a scalar subquery: computed once per search, where a function of the query in the row filter
    # would be computed again for every row the plan reads (parsing the whole message ten thousand times).
    tsquery = select(func.plainto_tsquery(language, words)).scalar_subquery()
    lexemes = func.unnest(query_lexemes).table_valued("lexeme").render_derived()
    longest = select(lexemes.c.lexeme).order_by(func.length(lexemes.c.lexeme).desc(), lexemes.c.lexeme) \
        .limit(RANK_WORDS).subquery()
    longest_words = select(func.coalesce(func.string_agg(longest.c.lexeme, " "), "")).scalar_subquery()
    rank_query = select(func.plainto_tsquery(language, longest_words)).scalar_subquery()
    # As a phrase of the same tokens the note was indexed by: a whole identifier (LTH-5, not LTH-512), looked up
    # in the word index. A substring scan of the text costs a recheck of every note sharing its trigrams.
    phrases = [select(func.phraseto_tsquery(language, bindparam(f"{prefix}identifier_{n}"))).scalar_subquery()
               for n in range(identifiers)]
    # A subquery with a limit is not merged into the ranking query: the index finds the matches, the heap scan
    # stops at the limit, and only those are ranked.
    matched = (
        select(model.id, text_column.label("text"), model.words, model.at)
        .where(model.tenant_id == bindparam("tenant_id"), model.memory_pk == bindparam("memory_pk"), live,
               or_(model.words.op("@@")(tsquery), *(model.words.op("@@")(p) for p in phrases)))
        .limit(bindparam("ranked"))
        .subquery("matched")
    )
    # An exact identifier counts more than any word rank (ts_rank stays well under 1).
    rank: Any = func.ts_rank(matched.c.words, rank_query)
    for phrase in phrases:
        rank = rank + case((matched.c.words.op("@@")(phrase), 1.0), else_=0.0)
    return (select(matched.c.id, matched.c.text, rank.label("rank"), matched.c.at)
            .order_by(rank.desc(), matched.c.id.desc()).limit(bindparam("limit")))


def _identifiers(query: str) -> list[str]:
    return list(dict.fromkeys(i for i in _IDENTIFIER.findall(query) if len(i) >= _IDENTIFIER_MIN))


async def ranked_by_words(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, queries: Sequence[tuple[Kind, str]],
    language: str = "simple", limit: int = 20,
) -> list[list[int]]:
    """The ids each search by words ranks (full-text matches by `ts_rank`, an identifier of the query also
    matching by its exact form), for several searches in one statement: one
    round trip, and no texts read back, where recall needs only the rankings."""
    if not queries:
        return []
    found = list(map(_identifiers, (q for _, q in queries)))
    values: dict[str, Any] = {"tenant_id": tenant_id, "memory_pk": memory_pk, "language": language,
                              "ranked": RANKED_MATCHES, "limit": limit}
    for b, ((_, query), identifiers) in enumerate(zip(queries, found, strict=True)):
        values[f"b{b}_query"] = query
        values.update({f"b{b}_identifier_{n}": i for n, i in enumerate(identifiers)})
    rows = await session.execute(_words_union(tuple((k, len(i)) for (k, _), i in zip(queries, found, strict=True))),
                                 values)
    return _rankings(len(queries), ((b, i, -float(r)) for b, i, r in rows))


async def ranked_by_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, vectors: Sequence[Any], kind: Kind = "facts",
    limit: int = 20,
) -> list[list[int]]:
    """The ids each search by meaning ranks (nearest by cosine over the HNSW index, its scans relaxed for every
    connection: `store.db.Database`), for several vectors in one statement."""
    nearest = await nearest_by_meaning(session, tenant_id=tenant_id, memory_pk=memory_pk, vectors=vectors,
                                       kind=kind, limit=limit)
    return [[i for i, _ in ranking] for ranking in nearest]


async def nearest_by_meaning(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, vectors: Sequence[Any], kind: Kind = "facts",
    limit: int = 20,
) -> list[list[tuple[int, float]]]:
    """As `ranked_by_meaning`, each id with its cosine similarity to the search's vector: a ranking always has
    a first, the similarity says whether it is near at all."""
    if not vectors:
        return []
    values: dict[str, Any] = {"tenant_id": tenant_id, "memory_pk": memory_pk, "limit": limit}
    values.update({f"vector_{b}": v for b, v in enumerate(vectors)})
    rows = (await session.execute(_meaning_union(kind, len(vectors)), values)).all()
    similarity = {(b, i): 1.0 - float(d) for b, i, d in rows}
    return [[(i, similarity[(b, i)]) for i in ranking]
            for b, ranking in enumerate(_rankings(len(vectors), ((b, i, float(d)) for b, i, d in rows)))]


def _rankings(count: int, rows: Any) -> list[list[int]]:
    """Each search's ids by its own order (ascending key, then newest id first), whatever order the union
    returned its rows in."""
    by_search: list[list[tuple[float, int]]] = [[] for _ in range(count)]
    for b, i, key in rows:
        by_search[b].append((key, -i))
    return [[-i for _, i in sorted(hits)] for hits in by_search]


@functools.lru_cache(maxsize=512)
def _words_union(shape: tuple[tuple[Kind, int], ...]) -> Any:
    """One search by words per (kind, number of identifiers), each branch its own statement with its own limit."""
    branches = []
    for b, (kind, identifiers) in enumerate(shape):
        one = _words_statement(kind, identifiers, f"b{b}_").subquery(f"b{b}")
        branches.append(select(literal(b).label("search"), one.c.id, one.c.rank))
    return union_all(*branches)


@functools.lru_cache(maxsize=64)
def _meaning_union(kind: Kind, count: int) -> Any:
    model, _, live = _table(kind)
    branches = []
    for b in range(count):
        distance = model.embedding.cosine_distance(query_vector(f"vector_{b}", model.embedding.type.dim))
        one = (select(model.id, distance.label("distance"))
               .where(model.tenant_id == bindparam("tenant_id"), model.memory_pk == bindparam("memory_pk"), live,
                      model.embedding.is_not(None))
               .order_by(distance).limit(bindparam("limit")).subquery(f"b{b}"))
        branches.append(select(literal(b).label("search"), one.c.id, one.c.distance))
    return union_all(*branches)
