"""An agent loop that calls Lethe itself: decorate before each model call, report after it.

    LETHE_URL=http://localhost:8080 LETHE_KEY=lethe_... OPENAI_BASE_URL=... OPENAI_API_KEY=... \\
        python examples/agent_loop.py

Lethe decides what the model sees; the agent keeps its own transcript and never sees the note tool.
"""

from __future__ import annotations

import os

from openai import OpenAI

from lethe.client import Lethe

QUESTIONS = ["Hi! I run the billing service and we migrate to the new ledger on Friday.",
             "Remind me: when is the ledger migration?"]


def run(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
        questions: list[str] = QUESTIONS, model: str = "gpt-4o-mini") -> list[str]:
    """Ask each question in turn; returns the model's answers."""
    model_client = OpenAI(base_url=model_base_url, api_key=model_key)
    transcript: list[dict] = [{"role": "system", "content": "You are a concise assistant."}]
    answers = []
    with Lethe(lethe_url, lethe_key) as lethe:
        for question in questions:
            transcript.append({"role": "user", "content": question})
            while True:
                decorated = lethe.decorate(memory_id, {"model": model, "messages": transcript})
                completion = model_client.chat.completions.create(**decorated.request)
                reported = lethe.report(memory_id, decorated.decorate_id, completion)
                if not reported.needs_continuation:  # the note was all the model said: ask again
                    break
            message = reported.response["choices"][0]["message"]
            transcript.append({"role": "assistant", "content": message.get("content") or ""})
            answers.append(message.get("content") or "")
    return answers


if __name__ == "__main__":
    for answer in run(os.environ.get("LETHE_URL", "http://localhost:8080"), os.environ["LETHE_KEY"],
                      os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), os.environ["OPENAI_API_KEY"],
                      memory_id=os.environ.get("LETHE_MEMORY", "example-agent-loop")):
        print(answer)
