"""Judgments from any OpenAI-compatible chat model, with JSON-schema output and a clean fallback.

Each call has a deadline and a completion-token budget. A timeout, an HTTP error, or an answer that is not
the JSON asked for (wrong shape, a missing or repeated item, a value out of range) is logged and that batch
is judged by the embedded judge instead: background work never stalls on a model that misbehaves.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import openai

from contracts.errors import ProviderError
from engine.cutting import BoundaryScores
from engine.graph import Relation
from engine.salience import Act
from providers.judge import (
    EXTRACTED_SOURCES,
    AboutVerdict,
    ActVerdict,
    ContradictionVerdict,
    DistillVerdict,
    EntityMention,
    ExtractedFact,
    FactClaim,
    Judge,
    Relevance,
    RelevanceVerdict,
    SameEntityVerdict,
)
from providers.openai_client import make_client, openai_errors
from providers.prompts import TASKS, Task, claim_text, clip, mention, numbered
from providers.tokens import TiktokenCounter
from providers.usage import UsageScope, UsageSink, record_usage

__all__ = ["OpenAIJudge"]

logger = logging.getLogger(__name__)
T = TypeVar("T")
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


class _Junk(Exception):
    """The model answered, but not with what was asked."""


class OpenAIJudge:
    """The `Judge` protocol over `/v1/chat/completions`; `fallback` answers whatever this one cannot."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        fallback: Judge,
        timeout_seconds: float = 20.0,
        max_retries: int = 2,
        deadline_seconds: float | None = None,
        max_completion_tokens: int = 1024,
        max_items_per_call: int = 24,
        max_chars_per_text: int = 1500,
        usage_sink: UsageSink | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self._client = client or make_client(
            base_url=base_url, api_key=api_key, timeout_seconds=timeout_seconds, max_retries=max_retries
        )
        self._model = model
        self._fallback = fallback
        self._deadline = deadline_seconds or timeout_seconds * (max_retries + 1)
        self._max_completion = max_completion_tokens
        self._max_items = max_items_per_call
        self._limit = max_chars_per_text
        self._usage_sink = usage_sink
        self._counter = TiktokenCounter()
        self.fallbacks = 0

    async def score_boundaries(
        self, units: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[BoundaryScores]:
        # Boundaries are judged in context, so the whole stretch goes in one call.
        def parse(item: dict[str, Any]) -> BoundaryScores:
            return BoundaryScores(first=_unit(item["start"]), last=_unit(item["end"]))

        return await self._judge(
            TASKS["boundaries"],
            numbered("Unit", units, limit=self._limit),
            len(units),
            parse,
            lambda: self._fallback.score_boundaries(units, scope=scope),
            scope,
        )

    async def judge_about(
        self, facts: Sequence[str], episodes: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[list[AboutVerdict]]:
        if not facts or not episodes:
            return [[] for _ in facts]
        rows: list[list[AboutVerdict]] = []
        per_call = max(1, self._max_items // len(episodes))
        for start in range(0, len(facts), per_call):
            chunk = list(facts[start : start + per_call])
            pairs = [(f, e) for f in range(len(chunk)) for e in range(len(episodes))]
            prompt = "\n\n".join(
                [
                    numbered("Fact", chunk, limit=self._limit),
                    numbered("Episode", episodes, limit=self._limit * 2),
                    "\n".join(f"Item {i}: fact {f}, episode {e}" for i, (f, e) in enumerate(pairs)),
                ]
            )

            def parse(item: dict[str, Any]) -> AboutVerdict:
                return AboutVerdict(about=_flag(item["about"]), score=_unit(item["score"]))

            async def local(chunk: list[str] = chunk) -> list[AboutVerdict]:
                matrix = await self._fallback.judge_about(chunk, episodes, scope=scope)
                return [verdict for row in matrix for verdict in row]

            flat = await self._judge(TASKS["about"], prompt, len(pairs), parse, local, scope)
            rows.extend(flat[i : i + len(episodes)] for i in range(0, len(flat), len(episodes)))
        return rows

    async def rate_relevance(
        self, dialogue: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[RelevanceVerdict]:
        def parse(item: dict[str, Any]) -> RelevanceVerdict:
            level = Relevance[str(item["level"]).upper()]
            return RelevanceVerdict(level=level, score=level / 3)

        return await self._chunked(
            TASKS["relevance"],
            facts,
            lambda chunk: (
                f"Dialogue:\n{clip(dialogue, self._limit * 3)}\n\n"
                + numbered("Fact", chunk, limit=self._limit)
            ),
            parse,
            lambda chunk: self._fallback.rate_relevance(dialogue, chunk, scope=scope),
            scope,
        )

    async def judge_distill(
        self, conversation: str, facts: Sequence[str], *, scope: UsageScope | None = None
    ) -> list[DistillVerdict]:
        def parse(item: dict[str, Any]) -> DistillVerdict:
            relevant = _flag(item["relevant"])
            return DistillVerdict(
                relevant=relevant, already_said=_flag(item["already_said"]), score=1.0 if relevant else 0.0
            )

        return await self._chunked(
            TASKS["distill"],
            facts,
            lambda chunk: (
                f"Conversation:\n{clip(conversation, self._limit * 3)}\n\n"
                + numbered("Fact", chunk, limit=self._limit)
            ),
            parse,
            lambda chunk: self._fallback.judge_distill(conversation, chunk, scope=scope),
            scope,
        )

    async def judge_same_entity(
        self, pairs: Sequence[tuple[EntityMention, EntityMention]], *, scope: UsageScope | None = None
    ) -> list[SameEntityVerdict]:
        def render(chunk: Sequence[tuple[EntityMention, EntityMention]]) -> str:
            limit = self._limit // 2
            return "\n".join(
                f"Item {i}: {mention(a, limit=limit)} and {mention(b, limit=limit)}"
                for i, (a, b) in enumerate(chunk)
            )

        def parse(item: dict[str, Any]) -> SameEntityVerdict:
            return SameEntityVerdict(same=_flag(item["same"]), score=_unit(item["score"]))

        return await self._chunked(
            TASKS["same_entity"],
            pairs,
            render,
            parse,
            lambda chunk: self._fallback.judge_same_entity(chunk, scope=scope),
            scope,
        )

    async def judge_contradiction(
        self, pairs: Sequence[tuple[str | FactClaim, str | FactClaim]], *, scope: UsageScope | None = None
    ) -> list[ContradictionVerdict]:
        def render(chunk: Sequence[tuple[str | FactClaim, str | FactClaim]]) -> str:
            return "\n".join(
                f"Item {i}: older: {claim_text(old, limit=self._limit)} | newer: {claim_text(new, limit=self._limit)}"
                for i, (old, new) in enumerate(chunk)
            )

        def parse(item: dict[str, Any]) -> ContradictionVerdict:
            return ContradictionVerdict(relation=Relation(item["relation"]), score=_unit(item["score"]))

        return await self._chunked(
            TASKS["contradiction"],
            pairs,
            render,
            parse,
            lambda chunk: self._fallback.judge_contradiction(chunk, scope=scope),
            scope,
        )

    async def judge_acts(self, episodes: Sequence[str], *, scope: UsageScope | None = None) -> list[ActVerdict]:
        def parse(item: dict[str, Any]) -> ActVerdict:
            return ActVerdict(act=Act(item["act"]), score=_unit(item["score"]))

        return await self._chunked(
            TASKS["acts"],
            episodes,
            lambda chunk: numbered("Episode", chunk, limit=self._limit),
            parse,
            lambda chunk: self._fallback.judge_acts(chunk, scope=scope),
            scope,
        )

    async def extract_facts(self, stretches: Sequence[str], *, scope: UsageScope | None = None
                            ) -> list[list[ExtractedFact]]:
        def parse(item: dict[str, Any]) -> list[ExtractedFact]:
            found = []
            for fact in item["facts"]:
                note, subject, obj = (str(fact[k]).strip() for k in ("note", "subject", "object"))
                if note and subject and obj:
                    source = fact.get("source") if fact.get("source") in EXTRACTED_SOURCES else "extracted"
                    found.append(ExtractedFact(note[:4000], subject[:400], obj[:400], source))
            return found

        return await self._chunked(
            TASKS["extract"],
            stretches,
            lambda chunk: numbered("Stretch", chunk, limit=self._limit),
            parse,
            lambda chunk: self._fallback.extract_facts(chunk, scope=scope),
            scope,
        )

    async def _chunked(
        self,
        task: Task,
        items: Sequence[Any],
        render: Callable[[Sequence[Any]], str],
        parse: Callable[[dict[str, Any]], T],
        local: Callable[[list[Any]], Any],
        scope: UsageScope | None,
    ) -> list[T]:
        out: list[T] = []
        for start in range(0, len(items), self._max_items):
            chunk = list(items[start : start + self._max_items])
            out.extend(
                await self._judge(task, render(chunk), len(chunk), parse, lambda c=chunk: local(c), scope)
            )
        return out

    async def _judge(
        self,
        task: Task,
        prompt: str,
        count: int,
        parse: Callable[[dict[str, Any]], T],
        local: Callable[[], Any],
        scope: UsageScope | None,
    ) -> list[T]:
        if count == 0:
            return []
        try:
            items = await self._ask(task, prompt, count, scope)
            return _complete(items, count, parse)
        except (ProviderError, TimeoutError, _Junk) as exc:
            self.fallbacks += 1
            reason = "deadline passed" if isinstance(exc, TimeoutError) else str(exc)
            logger.warning(
                "judge fell back to the embedded judge",
                extra={"purpose": task.name, "model": self._model, "reason": reason, "items": count},
            )
            return list(await local())

    async def _ask(self, task: Task, prompt: str, count: int, scope: UsageScope | None) -> list[Any]:
        budget = min(self._max_completion, 32 + task.tokens_per_item * count)
        limit_key = "max_completion_tokens" if self._model.startswith(_REASONING_PREFIXES) else "max_tokens"
        messages = [{"role": "system", "content": task.system}, {"role": "user", "content": prompt}]
        async with asyncio.timeout(self._deadline):
            with openai_errors(task.name):
                response = await self._client.chat.completions.create(
                    model=self._model,
                    messages=messages,  # type: ignore[arg-type]
                    response_format=task.response_format(),  # type: ignore[arg-type]
                    temperature=0,
                    **{limit_key: budget},
                )
        usage = response.usage
        prompt_tokens = (
            usage.prompt_tokens
            if usage
            else self._counter.count_request({"model": self._model, "messages": messages})
        )
        content = response.choices[0].message.content if response.choices else None
        completion_tokens = usage.completion_tokens if usage else self._counter.count_text(content or "")
        await record_usage(
            self._usage_sink,
            scope,
            provider="openai",
            model=self._model,
            purpose=task.name,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )
        if response.choices and response.choices[0].finish_reason == "length":
            # A cut-off answer may still parse by luck; it is not the whole answer, so it is not believed.
            raise _Junk("the answer ran past its token budget")
        try:
            body = json.loads(content or "")
        except ValueError as exc:
            raise _Junk(f"not JSON: {clip(content or '', 80)!r}") from exc
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            raise _Junk("no items list")
        return body["items"]


def _complete(items: list[Any], count: int, parse: Callable[[dict[str, Any]], T]) -> list[T]:
    """Every item exactly once, each parsed; anything less is junk."""
    found: dict[int, T] = {}
    for item in items:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("i"), int)
            or isinstance(item.get("i"), bool)
        ):
            raise _Junk("an item without a number")
        index = item["i"]
        if not 0 <= index < count or index in found:
            raise _Junk(f"item number {index} out of range or repeated")
        try:
            found[index] = parse(item)
        except (KeyError, ValueError, TypeError) as exc:
            raise _Junk(f"item {index}: {exc!r}") from exc
    if len(found) != count:
        raise _Junk(f"answered {len(found)} of {count} items")
    return [found[i] for i in range(count)]


def _unit(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"{value!r} is not a score between 0 and 1")
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return value
