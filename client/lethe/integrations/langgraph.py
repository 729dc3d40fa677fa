"""Lethe for LangGraph's `create_react_agent`: the graph's messages go through decorate before each model call,
and each reply through report.

    hooks = LetheHooks(Lethe(url, key), model="gpt-4o-mini", instructions="You help with tickets.")
    agent = create_react_agent(hooks.model(chat_model, tools), tools, pre_model_hook=hooks.pre_model_hook)
    agent.invoke({"messages": [("user", "Hello")]}, {"configurable": {"thread_id": "my-conversation"}})

- `pre_model_hook`: the state's messages, as Chat Completions messages (tool calls included), with the
  instructions and the tools' definitions, go to decorate; what comes back is the model's input
  (`llm_input_messages`: the state keeps the whole history, the model sees Lethe's view of it).
- `model(chat_model, tools)`: the model `create_react_agent` calls (its dynamic-model form). It binds the tools
  Lethe's request names (the `note` tool while a note is asked for), reports the reply and hands the graph the
  reply as report returns it, without the note call; when the note was all the model said, it asks Lethe and
  the model again, so the graph always gets an ordinary answer. Reporting here rather than in a post-model hook
  also covers agents without tools, whose graph has no post-model hook.

The memory is `memory_id`, or else the run's `thread_id`. With a sync `Lethe`, invoke and ainvoke both work; with
an `AsyncLethe`, ainvoke only.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
from langchain_core.messages.utils import convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.utils.function_calling import convert_to_openai_tool

from lethe.client import AsyncLethe, DecorateResult, Lethe, ReportResult

__all__ = ["LetheHooks"]

# A reply that was only the note call is followed by another call; this many calls at most (as wrap() does).
_MAX_CALLS = 3


def _chat(message: BaseMessage) -> dict[str, Any]:
    chat: dict[str, Any] = convert_to_openai_messages(message)
    if isinstance(message, AIMessage):
        chat.pop("name", None)  # the graph names its replies after they are reported
    return chat


@dataclass
class _Pending:
    """A decorate whose reply is still to come: the request sent, what came back, and how many messages of the
    model's input are Lethe's (the rest, before them, are a prompt the graph put in front)."""

    request: dict[str, Any]
    decorated: DecorateResult
    sent: int


class LetheHooks:
    """The pre-model hook and the reporting model for one Lethe gateway; the memory is `memory_id` or the run's
    `thread_id`."""

    def __init__(self, lethe: Lethe | AsyncLethe, memory_id: str | None = None, *, model: str,
                 instructions: str | None = None) -> None:
        self._lethe, self._memory_id, self._model, self._instructions = lethe, memory_id, model, instructions
        self._tools: list[dict[str, Any]] = []
        self._pending: dict[str, _Pending] = {}
        # Per memory, the replies as Lethe holds them (the agent's view, note call taken out), by message id: sent
        # back as they were, so each resend lines up with the memory byte for byte.
        self._held: dict[str, dict[str, dict[str, Any]]] = {}
        self.pre_model_hook: Runnable[Any, dict[str, Any]] = RunnableLambda(self._pre, afunc=self._apre,
                                                                            name="lethe_decorate")

    def model(self, chat_model: Any, tools: Sequence[Any] = ()) -> Callable[[Any, Any], Runnable[Any, AIMessage]]:
        """`chat_model` (any LangChain chat model with `bind_tools`) as `create_react_agent`'s model: pass the same
        `tools` to both."""
        self._tools = [convert_to_openai_tool(tool) for tool in tools]
        runnable: Runnable[Any, AIMessage] = RunnableLambda(
            lambda messages, config: self._call(chat_model, messages, config),
            afunc=lambda messages, config: self._acall(chat_model, messages, config), name="lethe_model")
        return lambda state, runtime: runnable

    # --- the pre-model hook: decorate ---

    def _pre(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        memory, request = self._request(state, config)
        return self._decorated(memory, request, self._sync.decorate(memory, request))

    async def _apre(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        if not isinstance(self._lethe, AsyncLethe):
            return await asyncio.to_thread(self._pre, state, config)
        memory, request = self._request(state, config)
        return self._decorated(memory, request, await self._lethe.decorate(memory, request))

    def _request(self, state: Any, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        memory = self._memory(config)
        messages = state["messages"] if isinstance(state, dict) else state.messages
        # Only the replies still in the state are kept: the map stays the size of the graph's history.
        held = self._held[memory] = {key: value for key, value in self._held.get(memory, {}).items()
                                     if key in {str(m.id) for m in messages}}
        history = [held.get(str(m.id)) or _chat(m) for m in messages]
        if self._instructions:
            history.insert(0, {"role": "system", "content": self._instructions})
        request: dict[str, Any] = {"model": self._model, "messages": history}
        if self._tools:
            request["tools"] = self._tools  # counted against the ceiling, as the model gets them
        return memory, request

    def _decorated(self, memory: str, request: dict[str, Any], decorated: DecorateResult) -> dict[str, Any]:
        view = convert_to_messages(decorated.request["messages"])
        self._pending[memory] = _Pending(request, decorated, len(view))
        return {"llm_input_messages": view}

    # --- the model: call, report, and call again after a reply that was only the note ---

    def _call(self, chat_model: Any, messages: list[BaseMessage], config: RunnableConfig) -> AIMessage:
        memory = self._memory(config)
        pending = self._take_pending(memory)
        for attempt in range(_MAX_CALLS):
            reply = self._bound(chat_model, pending).invoke(messages, config)
            reported = self._sync.report(memory, pending.decorated.decorate_id, self._completion(reply))
            if not reported.needs_continuation or attempt == _MAX_CALLS - 1:
                return self._answer(memory, reply, reported)
            decorated = self._sync.decorate(memory, pending.request)
            messages, pending = self._again(messages, pending, decorated)
        raise AssertionError("unreachable")

    async def _acall(self, chat_model: Any, messages: list[BaseMessage], config: RunnableConfig) -> AIMessage:
        if not isinstance(self._lethe, AsyncLethe):
            return await asyncio.to_thread(self._call, chat_model, messages, config)
        memory = self._memory(config)
        pending = self._take_pending(memory)
        for attempt in range(_MAX_CALLS):
            reply = await self._bound(chat_model, pending).ainvoke(messages, config)
            reported = await self._lethe.report(memory, pending.decorated.decorate_id, self._completion(reply))
            if not reported.needs_continuation or attempt == _MAX_CALLS - 1:
                return self._answer(memory, reply, reported)
            decorated = await self._lethe.decorate(memory, pending.request)
            messages, pending = self._again(messages, pending, decorated)
        raise AssertionError("unreachable")

    def _take_pending(self, memory: str) -> _Pending:
        pending = self._pending.pop(memory, None)
        if pending is None:
            raise RuntimeError("LetheHooks.model() needs LetheHooks.pre_model_hook as the graph's pre_model_hook")
        return pending

    @staticmethod
    def _bound(chat_model: Any, pending: _Pending) -> Any:
        # The tools of Lethe's request: the agent's own, and `note` while a note is asked for.
        tools = pending.decorated.request.get("tools")
        return chat_model.bind_tools(tools) if tools else chat_model

    def _again(self, messages: list[BaseMessage], pending: _Pending,
               decorated: DecorateResult) -> tuple[list[BaseMessage], _Pending]:
        view = convert_to_messages(decorated.request["messages"])
        prompt = messages[:len(messages) - pending.sent]
        return [*prompt, *view], _Pending(pending.request, decorated, len(view))

    def _completion(self, reply: BaseMessage) -> dict[str, Any]:
        """The reply as a Chat Completions response, with the provider's token counts when the model gave them."""
        message = _chat(reply)
        usage = getattr(reply, "usage_metadata", None) or {}
        completion: dict[str, Any] = {
            "id": str(reply.id or "lethe-langgraph"), "object": "chat.completion", "model": self._model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}]}
        if usage.get("input_tokens"):
            completion["usage"] = {"prompt_tokens": usage["input_tokens"],
                                   "completion_tokens": usage.get("output_tokens", 0),
                                   "total_tokens": usage.get("total_tokens", 0)}
        return completion

    def _answer(self, memory: str, reply: BaseMessage, reported: ReportResult) -> AIMessage:
        """The reply as report returned it (no note call), kept by id to be sent back exactly so."""
        visible = reported.response["choices"][0]["message"]
        answer = convert_to_messages([visible])[0]
        assert isinstance(answer, AIMessage)
        held = self._held.setdefault(memory, {})
        # A model that repeats its ids (or gives none) would make two replies one.
        answer.id = reply.id if reply.id and reply.id not in held else f"lethe-{uuid.uuid4().hex}"
        answer.response_metadata = dict(reply.response_metadata)
        answer.usage_metadata = getattr(reply, "usage_metadata", None)
        held[answer.id] = visible
        return answer

    # --- helpers ---

    @property
    def _sync(self) -> Lethe:
        if not isinstance(self._lethe, Lethe):
            raise TypeError("with an AsyncLethe, run the graph with ainvoke (or astream)")
        return self._lethe

    def _memory(self, config: RunnableConfig) -> str:
        memory = self._memory_id or (config.get("configurable") or {}).get("thread_id")
        if not memory:
            raise ValueError("LetheHooks needs a memory_id, or a thread_id in the run's config")
        return str(memory)
