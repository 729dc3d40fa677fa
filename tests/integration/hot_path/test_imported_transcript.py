"""A new memory whose first decorate carries a transcript long enough to cut at once (issue #15)."""

from __future__ import annotations

import httpx

from tests.integration.hot_path.scripted import _user_text


async def test_a_new_memory_imports_a_long_transcript_on_its_first_decorate(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    # 24 messages, well past what fits under the small ceiling: the first call must cut (and score) at once,
    # on a memory whose row that same call creates.
    messages = []
    for turn in range(12):
        messages.append({"role": "user", "content": _user_text(turn) * 6})
        messages.append({"role": "assistant", "content": f"Noted for turn {turn}. " * 60})
    messages.append({"role": "user", "content": "Where do we stand?"})
    body = {"model": "gpt-4o-mini", "messages": messages}
    auth = {"Authorization": f"Bearer {tenant[1]}"}

    response = await small_http.post("/v1/memories/imported/decorate", json=body, headers=auth)

    assert response.status_code == 200, response.text
    state = (await small_http.get("/v1/memories/imported", headers=auth)).json()
    assert state["messages"] == len(messages)
    assert state["episodes"], "a transcript this long is cut into episodes on its first call"
