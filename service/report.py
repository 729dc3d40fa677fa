"""Report: store the reply, take the note call, learn the size ratio, hand the reply back without the note.

Lethe keeps the note call in the memory's history and answers it with its own tool result there, so every
later request stays valid; the agent never sees either. Taking the note is shared with decorate
(`service.notes`), which takes it first when the agent hands over the reply before reporting it.
"""

from __future__ import annotations

from typing import Any

from contracts.errors import Conflict
from engine.anthropic import reply_message
from engine.recognition import agent_hash, content_hash
from engine.replies import note_calls, without_note_calls
from service.clock import Clock
from service.context import HotPath
from service.encoding import encode
from service.notes import note_answer, record_facts_written, take_note
from service.shapes import agent_reply_is_empty, parse_report, reply_items, role_of, usage_input_tokens
from service.users import bind_agent, bind_user
from store.repositories import idempotency, memories, messages, outbox, size_ratios

__all__ = ["report"]


def _reply_history(
    shape: str, items: list[dict[str, Any]], agent_response: dict[str, Any]
) -> list[tuple[dict[str, Any], str | None, bool]]:
    """The reply as stored (note calls kept), each with the hash of what the agent got and whether the agent
    may have dropped it (a reply that was only a note call reaches it empty)."""
    if shape == "responses":
        visible = {agent_hash(item) for item in agent_response.get("output") or []}
        return [(item, digest if (digest := agent_hash(item)) in visible else None, False) for item in items]
    if shape == "messages":
        # The agent keeps the reply as Anthropic's SDKs do: an assistant message with the reply's content.
        shown = reply_message(agent_response)
    else:
        shown = agent_response["choices"][0]["message"]
    return [(items[0], agent_hash(shown), agent_reply_is_empty(shape, agent_response))]


async def report(
    ctx: HotPath, *, tenant_id: str, memory_id: str, body: Any, clock: Clock, idempotency_key: str | None,
    user_id: str | None = None, agent: str | None = None,
) -> bytes:
    """The answer's JSON (`ReportResponse`), encoded once: what is sent is what a retry gets back."""
    request = parse_report(body)
    body_hash = content_hash(body)
    key = idempotency_key or body_hash
    async with ctx.db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id, create=False)
        if user_id is not None:
            await bind_user(session, tenant_id=tenant_id, memory=memory, user_id=user_id)
        if agent is not None:
            bind_agent(memory, agent)
        replay = await idempotency.find_replay(session, tenant_id=tenant_id, memory_id=memory_id,
                                               endpoint="report", key=key, body_hash=body_hash)
        if replay is not None:
            return replay.body
        decoration = await memories.get_decoration(session, tenant_id=tenant_id, memory=memory,
                                                   decorate_id=request.decorate_id)
        if decoration.superseded_by is not None:
            raise Conflict(f"decorate {decoration.id!r} was superseded by {decoration.superseded_by!r}: a later "
                           "request replaced its user message; report the decorate that request got")
        if decoration.reported_at is not None:
            raise Conflict(f"decorate {decoration.id!r} was already reported; each model call needs its own decorate")
        shape, response = decoration.shape, request.response
        items = reply_items(shape, response)  # validates before anything is stored
        now = clock.advance(memory.latest_at)
        agent_response = without_note_calls(response)
        # Only the first choice enters history: a note call in another would leave a result answering nothing.
        kept = response if shape != "chat_completions" else {**response, "choices": response["choices"][:1]}
        calls = note_calls(kept)
        taken = await take_note(session, tenant_id=tenant_id, memory_pk=memory.id, decorate_id=decoration.id,
                                calls=calls, now=now)
        new: list[messages.NewMessage] = []
        # Every note call here was taken before: a decorate found this reply in the agent's history (its
        # report came late) and stored it with an answer. Stored again, it would stand twice in the history
        # and the agent's next resend would no longer line up with it.
        if not calls or taken.calls:
            new = [
                messages.NewMessage(body=item, role=role_of(item), content_hash=content_hash(item),
                                    turn=memory.last_turn, tokens=ctx.message_tokens(item, decoration.model),
                                    agent_hash=agent_hash, agent_optional=optional)
                for item, agent_hash, optional in _reply_history(shape, items, agent_response)
            ]
            new += [note_answer(ctx, call.call_id, shape, taken.result_text, model=decoration.model,
                                turn=memory.last_turn) for call in calls]
        stored = messages.append_messages(session, tenant_id=tenant_id, memory=memory, new=new, at=now)

        provider_tokens = usage_input_tokens(response)
        if decoration.model and provider_tokens:
            await size_ratios.learn(session, tenant_id=tenant_id, memory=memory, model=decoration.model,
                                    provider_tokens=provider_tokens, estimated_tokens=decoration.estimated_tokens,
                                    plausible=ctx.config.plausible_ratio, at=now)
        await memories.mark_reported(session, memory, decoration, at=now)
        outbox.add_event(session, tenant_id=tenant_id, memory=memory, kind="report", payload={
            "decorate_id": decoration.id, "messages": [message.seq for message in stored]})
        record_facts_written(session, tenant_id=tenant_id, memory=memory, decorate_id=decoration.id, taken=taken)
        answer = encode({"response": agent_response,
                         "needs_continuation": agent_reply_is_empty(shape, agent_response)})
        idempotency.remember_answer(session, tenant_id=tenant_id, memory_id=memory_id, endpoint="report",
                                    key=key, body_hash=body_hash, body=answer)
    return answer
