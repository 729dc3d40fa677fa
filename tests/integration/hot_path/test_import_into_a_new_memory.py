"""A new memory's first decorate may carry a whole imported transcript, past the budget: it is cut at once."""

from __future__ import annotations

import httpx

WORDS = "The rollout keeps pricing, refunds and tax rates in step across regions. "


async def test_first_decorate_of_a_new_memory_cuts_an_imported_transcript(
    small_http: httpx.AsyncClient, tenant: tuple[str, str]
) -> None:
    history = []
    for turn in range(1, 60):
        history += [{"role": "user", "content": f"Turn {turn}: where is LTH-{turn}? " + WORDS * 3},
                    {"role": "assistant", "content": f"LTH-{turn} is with Dana. " + WORDS * 5}]
    history.append({"role": "user", "content": "And now?"})
    auth = {"Authorization": f"Bearer {tenant[1]}"}
    response = await small_http.post("/v1/memories/imported/decorate", headers=auth,
                                     json={"model": "gpt-4o-mini", "messages": history})
    assert response.status_code == 200, response.text
    assert response.json()["note_ask_turns"]  # the imported turns were cut and the oldest are leaving
    state = (await small_http.get("/v1/memories/imported", headers=auth)).json()
    assert state["messages"] == len(history) and state["episodes"]
