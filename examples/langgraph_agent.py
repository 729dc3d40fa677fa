"""A LangGraph ReAct agent whose history passes through Lethe, with a `lookup` tool of its own.

    LETHE_URL=http://localhost:8080 LETHE_KEY=lethe_... OPENAI_BASE_URL=... OPENAI_API_KEY=... \\
        python examples/langgraph_agent.py

The graph keeps the whole conversation in its state (a checkpointer, per thread); before each model call the
pre-model hook sends it through decorate and the model sees Lethe's view; each reply is reported. Needs
`pip install "lethe-gateway-client[langgraph]"` (in this repository's .venv already). The small chat model below
talks to any OpenAI-compatible endpoint through the `openai` SDK; with `langchain-openai` installed,
`ChatOpenAI` does the same.
"""

from __future__ import annotations

import json
import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, convert_to_openai_messages
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from openai import OpenAI

from lethe.client import Lethe
from lethe.integrations.langgraph import LetheHooks

QUESTIONS = ["Hi! I run the billing service and we migrate to the new ledger on Friday.",
             "Please lookup LTH-7 and tell me who owns it.",
             "Remind me: when is the ledger migration?"]
TICKETS = {"LTH-7": "LTH-7: refund line rounding, owner Dana, due Thursday"}


@tool
def lookup(query: str) -> str:
    """Look a ticket up by its id."""
    return next((text for key, text in TICKETS.items() if key in query), f"no ticket matches {query!r}")


class CompatibleChat(BaseChatModel):
    """A chat model on any OpenAI-compatible Chat Completions endpoint."""

    client: Any
    model: str

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        completion = self.client.chat.completions.create(
            model=self.model, messages=convert_to_openai_messages(messages), **kwargs)
        message = completion.choices[0].message
        calls = [{"id": c.id, "name": c.function.name, "args": json.loads(c.function.arguments or "{}")}
                 for c in message.tool_calls or []]
        usage = completion.usage
        reply = AIMessage(content=message.content or "", tool_calls=calls, usage_metadata={
            "input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens} if usage else None)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def run(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
        questions: list[str] = QUESTIONS, model: str = "gpt-4o-mini") -> list[str]:
    """Ask each question in turn on one thread (the memory); returns the agent's answers."""
    with Lethe(lethe_url, lethe_key) as lethe:
        hooks = LetheHooks(lethe, model=model, instructions="You are a concise assistant. Use lookup for tickets.")
        chat = CompatibleChat(client=OpenAI(base_url=model_base_url, api_key=model_key), model=model)
        agent = create_react_agent(hooks.model(chat, [lookup]), [lookup], pre_model_hook=hooks.pre_model_hook,
                                   checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": memory_id}}
        return [str(agent.invoke({"messages": [("user", question)]}, config)["messages"][-1].content)
                for question in questions]


if __name__ == "__main__":
    for answer in run(os.environ.get("LETHE_URL", "http://localhost:8080"), os.environ["LETHE_KEY"],
                      os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), os.environ["OPENAI_API_KEY"],
                      memory_id=os.environ.get("LETHE_MEMORY", "example-langgraph")):
        print(answer)
