"""A conversation at a small ceiling, the model answering every note ask: a fact from its first turns is sealed,
then forgotten, and a question about it long after has it in front of the model in a recall block (the
question's own, or an earlier turn's still in view, which recall does not repeat); a fact still in the facts
block is not repeated there."""

from __future__ import annotations

from typing import Any

import httpx

from store.db import Database
from tests.integration.recall.talk import Note, Talk, auth, facts_block, recall_blocks
from tests.integration.workflows.lane_support import lane_idle, scalar
from tests.support import eventually

CODE = {"note": "The staging server deploy code is ZX-4471.", "subject": "staging server", "object": "ZX-4471"}
OS = {"note": "The staging server runs Ubuntu 24.04.", "subject": "staging server", "object": "Ubuntu 24.04"}
WORDS = ("crate ledger pallet invoice courier harbour tariff freight manifest depot customs bonded warehouse "
         "forklift inventory shipment carrier consignment").split()

def _chatter(turn: int) -> str:
    """A long user message about the shipping archive, different each turn, that touches no planted fact."""
    words = [WORDS[(turn * 7 + i * 3) % len(WORDS)] for i in range(100)]
    return f"Turn {turn}, archive box {turn * 13}: " + " ".join(words) + "."

class Notes:
    """The model's notes: the deploy code first, archive trivia after, the OS when the test says so."""

    def __init__(self) -> None:
        self.asks = 0
        self.os_next = False
        self.written: list[str] = []

    def __call__(self, turns: list[int]) -> list[Note]:
        self.asks += 1
        if self.asks == 1:
            notes = [CODE]
        elif self.os_next:
            notes, self.os_next = [OS], False
        else:
            notes = [{"note": f"Archive box {self.asks * 101} holds customs forms for turns {turns[0]}-{turns[1]}.",
                      "subject": f"archive box {self.asks * 101}", "object": "customs forms"}]
        self.written += [n["note"] for n in notes]
        return notes

async def _forgotten(http: httpx.AsyncClient, key: str, memory_id: str) -> bool:
    state: dict[str, Any] = (await http.get(f"/v1/memories/{memory_id}", headers=auth(key))).json()
    return any(e["state"] == "forgotten" for e in state["episodes"]) and "ZX-4471" not in (state["facts_block"] or "")

def _fact_lines(text: str, note: str) -> int:
    """How many of a block's facts are this note (an excerpt's lines are indented, a fact's are not)."""
    return sum(1 for line in text.splitlines() if line.startswith("- ") and note in line)


async def _episodes(http: httpx.AsyncClient, key: str) -> list[tuple[str, int, int]]:
    state: dict[str, Any] = (await http.get("/v1/memories/long", headers=auth(key))).json()
    return [(e["state"], e["first_turn"], e["last_turn"]) for e in state["episodes"]]

async def test_a_forgotten_fact_comes_back_and_the_facts_block_is_not_repeated(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    notes = Notes()
    talk = Talk(recall_http, key, "long", notes=notes)
    turn = 0
    while not (CODE["note"] in notes.written and await _forgotten(recall_http, key, "long")):
        turn += 1
        assert turn < 60, "the deploy code was never forgotten"
        await talk.turn(_chatter(turn), f"Filed box {turn * 13}.")
    notes.os_next = True
    while OS["note"] not in facts_block(talk.decorations[-1]["request"]):
        turn += 1
        assert turn < 90, f"the OS fact never reached the facts block: {await _episodes(recall_http, key)}"
        await talk.turn(_chatter(turn), f"Filed box {turn * 13}.")
        # A person's next message comes after the lane has taken this one (cut, note asks, sealing): on a loaded
        # machine a lane many turns behind would hold back the note ask this loop waits for.
        await lane_idle(db, tenant_id)
    # The lane has brought the deploy code into the graph (it may still be busy with later turns).
    for fact in (CODE, OS):
        await eventually(lambda n=fact["note"]: scalar(  # type: ignore[misc]
            db, "SELECT count(*) FROM facts WHERE tenant_id = :t AND note = :n AND integrated_at IS NOT NULL",
            t=tenant_id, n=n), timeout=240)

    question = "Quick check before I deploy: what is the staging server deploy code, and which OS does it run?"
    asked = await talk.turn(question, "Thanks.")
    request = asked["request"]
    blocks = recall_blocks(request)
    # Each block stands just before the user message it was recalled for. The question has a block of its own
    # unless all it touches is in view already.
    assert all(request["messages"][i + 1]["role"] == "user" for i, _ in blocks), blocks
    shown = "\n".join(block for _, block in blocks)
    # The deploy code is back in front of the model as a fact, once: in this question's block, or in an earlier
    # turn's block still in view (which recall does not repeat; distill keeps it there, the question being what
    # followed that turn). An excerpt of the turn whose note wrote it may come with it.
    assert _fact_lines(shown, CODE["note"]) == 1, shown
    # The OS is in front of the model once: in the facts block, and then recall does not repeat it, or (when
    # a fade has forgotten it since) in a recall block.
    assert _fact_lines(facts_block(request), OS["note"]) + _fact_lines(shown, OS["note"]) == 1, \
        (facts_block(request), shown)
    # Its lane may still be busy with the turns above: erased, it leaves the shared worker to other tests.
    assert (await recall_http.delete("/v1/memories/long", headers=auth(key))).status_code == 200
