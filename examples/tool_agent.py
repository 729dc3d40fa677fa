"""A tool-calling agent through Lethe's proxy, on the Responses API: it answers its own `lookup` calls.

    LETHE_URL=http://localhost:8080 LETHE_KEY=lethe_... OPENAI_BASE_URL=... OPENAI_API_KEY=... \\
        python examples/tool_agent.py

Lethe's `note` tool is added and taken away inside the gateway: the agent only ever sees its own tools.
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

TOOLS = [{"type": "function", "name": "lookup", "description": "Look a ticket up by its id.",
          "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}]
TICKETS = {"LTH-7": "LTH-7: refund line rounding, owner Dana, due Thursday"}


def lookup(query: str) -> str:
    return next((text for key, text in TICKETS.items() if key in query), f"no ticket matches {query!r}")


def run(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
        model: str = "gpt-4.1-mini") -> tuple[str, list[str]]:
    """Asks about a ticket; returns the final answer and the tools the agent ran."""
    client = OpenAI(base_url=f"{lethe_url}/v1", api_key=lethe_key, default_headers={
        "X-Lethe-Memory": memory_id, "X-Lethe-Upstream-Base-URL": model_base_url, "X-Lethe-Upstream-Key": model_key})
    items: list = [{"role": "user", "content": "Please lookup LTH-7 and tell me who owns it."}]
    ran: list[str] = []
    for _ in range(5):
        response = client.responses.create(model=model, instructions="Use lookup for tickets.", input=items,
                                           tools=TOOLS)
        items += [item.model_dump(exclude_none=True) for item in response.output]
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text, ran
        for call in calls:
            ran.append(call.name)
            items.append({"type": "function_call_output", "call_id": call.call_id,
                          "output": lookup(json.loads(call.arguments)["query"])})
    raise RuntimeError("the agent did not finish in five calls")


if __name__ == "__main__":
    answer, tools = run(os.environ.get("LETHE_URL", "http://localhost:8080"), os.environ["LETHE_KEY"],
                        os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), os.environ["OPENAI_API_KEY"],
                        memory_id=os.environ.get("LETHE_MEMORY", "example-tool-agent"))
    print(f"tools run: {tools}\n{answer}")
