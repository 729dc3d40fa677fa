"""An OpenAI Agents SDK `Session` whose history is a Lethe memory.

    session = LetheSession("my-conversation", AsyncLethe(url, key), model="gpt-4.1-mini")
    agent = Agent(name="assistant", instructions="...", tools=[*tools, session.note_tool])
    result = await Runner.run(agent, "Hello", session=session, run_config=session.run_config())

How the SDK's session calls map onto Lethe's, one memory per session:

- `add_items`: what the user and the tools said (user messages, tool outputs) goes to decorate, after the
  transcript, as an agent loop sends its next request; what the model said (its messages, calls, reasoning) goes
  to report, against that decorate. The transcript keeps each reply as report hands it back, without the note
  call, so every resend lines up with what Lethe holds and nothing is stored twice.
- `get_items`: the history as Lethe decorates it: the facts block, the history still in view, recall blocks,
  the note ask.
- `run_config()`: the SDK reads the session before it knows the new user message, so what `get_items` returns
  cannot hold that message's recall block. Its `call_model_input_filter` sends each model call the request Lethe
  decorated for it instead, recall block and all. A streamed run saves its items only after the model answers:
  the filter takes the run's new items from the call's own input, and add_items skips them when they come.
- `note_tool`: the `note` tool, enabled only while Lethe asks for a note. The SDK runs it (the model then gets
  another call, as after any tool); the call itself reaches Lethe in the reply, where report takes its facts.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, cast

from agents import FunctionTool, RunConfig, RunContextWrapper
from agents.items import TResponseInputItem
from agents.memory import SessionSettings
from agents.run_config import CallModelData, ModelInputData
from agents.tool_context import ToolContext

from lethe.client import AsyncLethe, DecorateResult, LetheAPIError

__all__ = ["LetheSession"]

NOTE_TOOL = "note"
# Until Lethe first asks (its decorated request carries the tool's real schema), the tool is disabled anyway.
_NOTE_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {"notes": {"type": "array"}}, "required": ["notes"]}
# Responses items the model produces that are not a `..._call` (those are recognised by their type's ending).
_MODEL_ITEM_TYPES = frozenset({"reasoning", "mcp_list_tools", "mcp_approval_request", "compaction"})


def _from_model(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return item.get("role") == "assistant" or kind in _MODEL_ITEM_TYPES or (
        isinstance(kind, str) and kind.endswith("_call"))


def _is_note_call(item: dict[str, Any]) -> bool:
    return item.get("type") == "function_call" and item.get("name") == NOTE_TOOL


def _key(item: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies a run's item whether the SDK hands it to the filter or to add_items (ids and statuses
    aside)."""
    content = item.get("content", item.get("output"))
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return (item.get("type", "message"), item.get("role"), item.get("call_id"), item.get("arguments"), content)


def _closes_with_ask(items: list[dict[str, Any]]) -> bool:
    return bool(items) and items[-1].get("role") in ("system", "developer")


def _note_tool_of(decorated: DecorateResult | None) -> dict[str, Any] | None:
    tools = decorated.request.get("tools") if decorated is not None else None
    return next((t for t in tools or [] if isinstance(t, dict) and t.get("name") == NOTE_TOOL), None)


class LetheSession:
    """A Session for `Runner.run(..., session=...)` whose history lives in the Lethe memory `memory_id`.

    It keeps, in this process, the transcript it has sent (from the current turn's user message on: enough for
    Lethe to recognise what it holds); a new process with the same memory id goes on from what Lethe holds."""

    session_settings: SessionSettings | None = None

    def __init__(self, memory_id: str, lethe: AsyncLethe, *, model: str,
                 session_settings: SessionSettings | None = None) -> None:
        self.session_id = memory_id
        self.session_settings = session_settings
        self._lethe, self._model = lethe, model
        self._transcript: list[dict[str, Any]] = []
        # The latest decorate, until its reply is reported; `_fresh` until the filter has sent its request.
        self._decorated: DecorateResult | None = None
        self._fresh = False
        self._instructions: str | None = None
        self._note_calls: set[str] = set()
        self._offered = False  # whether the current model call was given the note tool
        # The current run: how many items of its model input are the view get_items handed out, the run's items
        # taken since (by add_items or the filter), and how many of those add_items has delivered.
        self._handed = 0
        self._run: list[dict[str, Any]] = []
        self._delivered = 0
        self._lock = asyncio.Lock()
        self.note_tool = FunctionTool(
            name=NOTE_TOOL, description="Record the facts of conversation turns when a message asks you to.",
            params_json_schema=dict(_NOTE_PARAMETERS), on_invoke_tool=self._noted, strict_json_schema=False,
            is_enabled=self._note_asked)

    @property
    def memory_id(self) -> str:
        return self.session_id

    # --- the Session protocol ---

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        default = self.session_settings.limit if self.session_settings else None
        # A run reads the session first, with the settings' limit; the SDK's other reads (a short tail) do not.
        starts_run = limit is None or limit == default
        limit = limit if limit is not None else default
        async with self._lock:
            if self._decorated is None and self._transcript:
                await self._decorate([])  # Lethe's view now: a fade, a sleep or a note ask since the last reply
            view = self._view()
            view = view[-limit:] if limit else view
            if starts_run:  # what the run's model calls send after these items is the run's own
                self._handed, self._run, self._delivered = len(view), [], 0
        return view

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        async with self._lock:
            fresh = [copy.deepcopy(dict(cast(dict[str, Any], item))) for item in items]
            # What the filter already took from a model call's input (a streamed run saves its items late).
            while fresh and self._delivered < len(self._run) and _key(fresh[0]) == _key(self._run[self._delivered]):
                fresh.pop(0)
                self._delivered += 1
            await self._take(fresh)
            self._run += fresh
            self._delivered = len(self._run)

    async def pop_item(self) -> TResponseInputItem | None:
        # Lethe keeps what it was sent; a different message sent in the popped user message's place replaces it.
        async with self._lock:
            if not self._transcript:
                return None
            popped = self._transcript.pop()
            if self._run and _key(self._run[-1]) == _key(popped):  # the run's too: given again, it is taken again
                self._run.pop()
                self._delivered = min(self._delivered, len(self._run))
            return cast(TResponseInputItem, popped)

    async def clear_session(self) -> None:
        async with self._lock:
            try:
                await self._lethe.erase(self.session_id)
            except LetheAPIError as exc:
                if exc.status != 404:
                    raise
            self._transcript, self._decorated, self._fresh = [], None, False
            self._handed, self._run, self._delivered = 0, [], 0
            self._note_calls.clear()

    # --- the model's side: what each call sends, and the note tool ---

    def run_config(self, **options: Any) -> RunConfig:
        """A RunConfig (with `options`) whose model calls send the request Lethe decorated for them."""
        return RunConfig(call_model_input_filter=self.call_model_input_filter, **options)

    async def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        async with self._lock:
            self._instructions = data.model_data.instructions
            # The run's items the session has not been given yet: the new input, when the run saves it late.
            unseen = [copy.deepcopy(dict(cast(dict[str, Any], item)))
                      for item in data.model_data.input[self._handed:][len(self._run):]]
            await self._take(unseen)
            self._run += unseen
            if not self._fresh:
                # Nothing new since the last reply (the model is called again after its note): ask Lethe again.
                await self._decorate([])
            if self._decorated is None:
                return data.model_data
            self._fresh = False
            request = self._decorated.request
            sent = copy.deepcopy(request["input"])
            if _note_tool_of(self._decorated) is not None and not self._offered and _closes_with_ask(sent):
                # Lethe asked after this call's tools were settled (a streamed run's message arrives here): the
                # ask, which closes the request, waits for the next call, which offers the tool.
                sent = sent[:-1]
            return ModelInputData(input=sent, instructions=request.get("instructions", data.model_data.instructions))

    async def _note_asked(self, context: RunContextWrapper[Any], agent: Any) -> bool:
        # The SDK settles a call's tools before its input filter runs: when the reply was reported and the model
        # is called again (after its note), Lethe is asked now, so the tools offered and the request agree.
        async with self._lock:
            if self._decorated is None and self._transcript:
                await self._decorate([])
            self._offered = _note_tool_of(self._decorated) is not None
            return self._offered

    async def _noted(self, context: ToolContext[Any], arguments: str) -> str:
        # The SDK needs an output for the call; Lethe reads the call from the reply and answers it in its history.
        return "Recorded."

    # --- decorate and report ---

    def _view(self) -> list[TResponseInputItem]:
        if self._decorated is None:
            return cast(list[TResponseInputItem], copy.deepcopy(self._transcript))
        return cast(list[TResponseInputItem], copy.deepcopy(self._decorated.request["input"]))

    async def _take(self, items: list[dict[str, Any]]) -> None:
        """What the user and the tools said goes to decorate, what the model said to report, in order."""
        said: list[dict[str, Any]] = []
        replied: list[dict[str, Any]] = []
        for item in items:
            if _from_model(item):
                if said:
                    await self._decorate(said)
                    said = []
                replied.append(item)
                continue
            if replied:
                await self._report(replied)
                replied = []
            # The note tool's output answers a call Lethe took out of the reply; Lethe answers it itself.
            if item.get("type") != "function_call_output" or item.get("call_id") not in self._note_calls:
                said.append(item)
        if replied:
            await self._report(replied)
        if said:
            await self._decorate(said)

    async def _decorate(self, new: list[dict[str, Any]]) -> None:
        """Send decorate the transcript and what is new; the transcript then holds it."""
        sent = self._transcript + new
        if not sent:
            return
        request: dict[str, Any] = {"model": self._model, "input": sent}
        if self._instructions:
            request["instructions"] = self._instructions  # counted against the ceiling, as the model gets them
        self._decorated = await self._lethe.decorate(self.session_id, request)
        self._fresh = True
        users = [index for index, item in enumerate(sent) if item.get("role") == "user"]
        # From the newest user message on is all Lethe needs to line a resend up with what it holds.
        self._transcript = sent[users[-1]:] if users else sent
        if (tool := _note_tool_of(self._decorated)) is not None:
            self.note_tool.description = str(tool.get("description") or self.note_tool.description)
            self.note_tool.params_json_schema = dict(tool.get("parameters") or _NOTE_PARAMETERS)

    async def _report(self, replied: list[dict[str, Any]]) -> None:
        """Report the model's items as its reply to the latest decorate; the transcript keeps what report hands
        back (the note call taken out)."""
        if self._decorated is None:
            if not self._transcript:  # a reply with nothing before it in this process: history to keep
                await self._decorate(replied)
                return
            await self._decorate([])  # the model was called again with nothing new (after its note)
        assert self._decorated is not None
        self._note_calls.update(str(item.get("call_id")) for item in replied if _is_note_call(item))
        reported = await self._lethe.report(self.session_id, self._decorated.decorate_id,
                                            {"object": "response", "status": "completed", "output": replied})
        self._decorated, self._fresh = None, False
        self._transcript += [item for item in reported.response.get("output") or [] if isinstance(item, dict)]
