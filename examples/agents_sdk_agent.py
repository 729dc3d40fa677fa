"""An OpenAI Agents SDK agent whose session is a Lethe memory, with a `lookup` tool of its own.

    LETHE_URL=http://localhost:8080 LETHE_KEY=lethe_... OPENAI_BASE_URL=... OPENAI_API_KEY=... \\
        python examples/agents_sdk_agent.py

The session sends each turn through decorate and report; every model call gets the request Lethe decorated
for it (`session.run_config()`), and `session.note_tool` answers Lethe's note ask when there is one. Needs
`pip install "lethe-gateway-client[agents]"` (in this repository's .venv already).
"""

from __future__ import annotations

import asyncio
import os

from agents import Agent, OpenAIResponsesModel, Runner, function_tool
from openai import AsyncOpenAI

from lethe.client import AsyncLethe
from lethe.integrations.agents import LetheSession

QUESTIONS = ["Hi! I run the billing service and we migrate to the new ledger on Friday.",
             "Please lookup LTH-7 and tell me who owns it.",
             "Remind me: when is the ledger migration?"]
TICKETS = {"LTH-7": "LTH-7: refund line rounding, owner Dana, due Thursday"}


@function_tool
def lookup(query: str) -> str:
    """Look a ticket up by its id."""
    return next((text for key, text in TICKETS.items() if key in query), f"no ticket matches {query!r}")


async def converse(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
                   questions: list[str] = QUESTIONS, model: str = "gpt-4.1-mini") -> list[str]:
    """Ask each question in turn, one run each, in one session; returns the agent's answers."""
    async with AsyncLethe(lethe_url, lethe_key) as lethe:
        session = LetheSession(memory_id, lethe, model=model)
        agent = Agent(name="assistant", instructions="You are a concise assistant. Use lookup for tickets.",
                      tools=[lookup, session.note_tool],
                      model=OpenAIResponsesModel(model, AsyncOpenAI(base_url=model_base_url, api_key=model_key)))
        # Tracing off: the SDK would send the traces to OpenAI, whatever the model's endpoint.
        config = session.run_config(tracing_disabled=True)
        return [str((await Runner.run(agent, question, session=session, run_config=config)).final_output)
                for question in questions]


def run(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
        questions: list[str] = QUESTIONS, model: str = "gpt-4.1-mini") -> list[str]:
    return asyncio.run(converse(lethe_url, lethe_key, model_base_url, model_key, memory_id=memory_id,
                                questions=questions, model=model))


if __name__ == "__main__":
    for answer in run(os.environ.get("LETHE_URL", "http://localhost:8080"), os.environ["LETHE_KEY"],
                      os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), os.environ["OPENAI_API_KEY"],
                      memory_id=os.environ.get("LETHE_MEMORY", "example-agents-sdk")):
        print(answer)
