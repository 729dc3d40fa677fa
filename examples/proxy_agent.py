"""The same agent through Lethe's proxy: only the OpenAI client's `base_url` (and key) change.

    LETHE_URL=http://localhost:8080 LETHE_KEY=lethe_... OPENAI_BASE_URL=... OPENAI_API_KEY=... \\
        python examples/proxy_agent.py

The memory is named in the base URL (`/v1/m/{memory_id}`), the upstream in two headers; a tenant whose
upstream is stored (`lethe tenant upstream`) needs neither header.
"""

from __future__ import annotations

import os

from openai import OpenAI

QUESTIONS = ["Hi! I run the billing service and we migrate to the new ledger on Friday.",
             "Remind me: when is the ledger migration?"]


def run(lethe_url: str, lethe_key: str, model_base_url: str, model_key: str, *, memory_id: str,
        questions: list[str] = QUESTIONS, model: str = "gpt-4o-mini", stream: bool = True) -> list[str]:
    client = OpenAI(base_url=f"{lethe_url}/v1/m/{memory_id}", api_key=lethe_key,
                    default_headers={"X-Lethe-Upstream-Base-URL": model_base_url, "X-Lethe-Upstream-Key": model_key})
    transcript: list[dict] = [{"role": "system", "content": "You are a concise assistant."}]
    answers = []
    for question in questions:
        transcript.append({"role": "user", "content": question})
        if stream:
            chunks = client.chat.completions.create(model=model, messages=transcript, stream=True)
            answer = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
        else:
            answer = client.chat.completions.create(model=model, messages=transcript).choices[0].message.content or ""
        transcript.append({"role": "assistant", "content": answer})
        answers.append(answer)
    return answers


if __name__ == "__main__":
    for answer in run(os.environ.get("LETHE_URL", "http://localhost:8080"), os.environ["LETHE_KEY"],
                      os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"), os.environ["OPENAI_API_KEY"],
                      memory_id=os.environ.get("LETHE_MEMORY", "example-proxy-agent")):
        print(answer)
