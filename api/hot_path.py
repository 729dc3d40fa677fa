"""Decorate and report: one short transaction each, under the memory's row lock, with an outbox row.

The workflow is signalled by the relay after commit, so neither call ever waits on Temporal.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import ValidationError

from api.errors import invalid_from_validation
from api.schemas import (
    ChatCompletionsRequest,
    DecorateResponse,
    ReportRequest,
    ReportResponse,
    ResponsesRequest,
)
from engine.errors import InvalidInput
from engine.recognition import content_hash, new_suffix_start
from store.db import Database
from store.models import Decoration, Memory
from store.repositories import memories, messages, outbox

__all__ = ["Clock", "decorate", "report"]

Shape = Literal["chat_completions", "responses"]
INSTRUCTION_ROLES = {"system", "developer"}


@dataclass(frozen=True)
class Clock:
    """The request's time: the server's, or `X-Lethe-Now` where the deployment allows it."""

    now: datetime
    overridden: bool = False

    def advance(self, memory: Memory) -> datetime:
        """The memory's clock never goes backwards: an override that would is refused."""
        if memory.clock is not None and self.now < memory.clock:
            if self.overridden:
                raise InvalidInput(
                    f"X-Lethe-Now {self.now.isoformat()} is before this memory's latest time "
                    f"{memory.clock.isoformat()}",
                    field="X-Lethe-Now",
                )
            return memory.clock  # a replica's clock slightly behind another's
        return self.now


def parse_request(body: Any) -> tuple[Shape, list[dict[str, Any]]]:
    """Validate a provider request and return its shape and its history (instructions excluded)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", field=None)
    if "messages" in body and "input" in body:
        raise InvalidInput("send either `messages` (Chat Completions) or `input` (Responses), not both",
                           field="input")
    try:
        if "input" in body:
            ResponsesRequest.model_validate(body)
            items = body["input"]
            history = [{"role": "user", "content": items}] if isinstance(items, str) else list(items)
            return "responses", history
        ChatCompletionsRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc
    chat = list(body["messages"])
    start = 0
    while start < len(chat) and chat[start].get("role") in INSTRUCTION_ROLES:
        start += 1  # the agent's instructions are request fields, not history
    return "chat_completions", chat[start:]


def _role(message: dict[str, Any]) -> str:
    return str(message.get("role") or message.get("type") or "unknown")


async def decorate(
    db: Database, *, tenant_id: str, memory_id: str, body: Any, clock: Clock
) -> DecorateResponse:
    shape, history = parse_request(body)
    decorate_id = "dec_" + secrets.token_hex(12)
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        now = clock.advance(memory)
        held = await messages.message_hashes(session, tenant_id=tenant_id, memory_pk=memory.id)
        hashes = [content_hash(m) for m in history]
        fresh = history[new_suffix_start(held, hashes):]
        new_rows = []
        for message in fresh:
            if _role(message) == "user":
                memory.last_turn += 1
                memory.last_user_message_at = now
            new_rows.append(
                messages.NewMessage(
                    body=message, role=_role(message), content_hash=content_hash(message), turn=memory.last_turn
                )
            )
        stored = messages.append_messages(session, tenant_id=tenant_id, memory=memory, new=new_rows, at=now)
        memory.clock = now
        session.add(
            Decoration(
                id=decorate_id, memory_pk=memory.id, tenant_id=tenant_id, shape=shape,
                model=str(body.get("model")), turn=memory.last_turn, at=now,
            )
        )
        outbox.add_event(
            session, tenant_id=tenant_id, memory=memory, kind="decorate",
            payload={"decorate_id": decorate_id, "messages": [row.seq for row in stored]},
        )
    return DecorateResponse(decorate_id=decorate_id, shape=shape, request=body)


def _reply_messages(shape: str, response: dict[str, Any]) -> list[dict[str, Any]]:
    if shape == "responses":
        output = response.get("output")
        if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
            raise InvalidInput("a Responses reply needs an `output` list of items", field="response.output")
        return list(output)
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidInput("a Chat Completions reply needs a non-empty `choices` list", field="response.choices")
    message = choices[0].get("message")
    if not isinstance(message, dict) or message.get("role") != "assistant":
        raise InvalidInput("the first choice needs an assistant `message`", field="response.choices[0].message")
    return [message]


async def report(
    db: Database, *, tenant_id: str, memory_id: str, body: Any, clock: Clock
) -> ReportResponse:
    try:
        request = ReportRequest.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from exc
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        decoration = await session.get(Decoration, request.decorate_id)
        if decoration is None or decoration.memory_pk != memory.id or decoration.tenant_id != tenant_id:
            raise InvalidInput(f"no decorate {request.decorate_id!r} in this memory", field="decorate_id")
        reply = _reply_messages(decoration.shape, request.response)
        now = clock.advance(memory)
        stored = messages.append_messages(
            session, tenant_id=tenant_id, memory=memory, at=now,
            new=[
                messages.NewMessage(body=m, role=_role(m), content_hash=content_hash(m), turn=memory.last_turn)
                for m in reply
            ],
        )
        memory.clock = now
        decoration.reported_at = now
        outbox.add_event(
            session, tenant_id=tenant_id, memory=memory, kind="report",
            payload={"decorate_id": decoration.id, "messages": [row.seq for row in stored]},
        )
    return ReportResponse(response=request.response)


async def memory_summary(db: Database, *, tenant_id: str, memory_id: str) -> dict[str, Any]:
    async with db.session() as session:
        memory = await memories.get_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        count = await memories.count_messages(session, tenant_id=tenant_id, memory_pk=memory.id)
    return {
        "memory_id": memory.memory_id,
        "created_at": memory.created_at.isoformat(),
        "messages": count,
        "turns": memory.last_turn,
        "events": memory.last_event_seq,
        "last_user_message_at": memory.last_user_message_at.isoformat() if memory.last_user_message_at else None,
    }
