"""A value that changed is never shown without what replaced it, whatever recall's deadline cuts: from a deadline
that leaves no time to read the memory to one that lets the walk finish, with a judge that never answers (the
search hits used as they are) and with the walk prepared by the lane, every block that holds the old value holds
the new one beside it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from engine.blocks.recall_block import recall_block
from engine.recall.grouping import RecalledFact
from providers.local_judge import LocalJudge
from recall.config import RecallConfig
from recall.find import Recaller
from store.db import Database
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.talk import Talk, recall_blocks
from tests.integration.recall.test_recall_lane import EMBEDDER, _StuckJudge
from tests.integration.workflows.lane_support import lane_idle, scalar

OLD = [{"note": "The launch is on Wednesday.", "subject": "launch", "object": "Wednesday"},
       {"note": "Dana owns the launch checklist.", "subject": "Dana", "object": "launch checklist"}]
NEW = [{"note": "The launch moved to Thursday.", "subject": "launch", "object": "Thursday"}]
QUESTION = [{"role": "user", "content": "When is the launch happening, and who owns its checklist?"}]
DEADLINES = (0.001, 0.005, 0.02, 0.06, 0.15, 1.0, 30.0)


async def _blocks(db: Database, tenant_id: str, memory_id: str) -> list[tuple[str, str]]:
    """(provenance, block) for every deadline, with a judge that answers and one that never does."""
    made = []
    for judge in (LocalJudge(EMBEDDER), _StuckJudge(EMBEDDER)):
        # The stuck judge's walk never ends: its runs end at their deadline with the hits as they are.
        for seconds in (0.15, 1.0, 3.0) if isinstance(judge, _StuckJudge) else DEADLINES:
            recaller = Recaller(embedder=EMBEDDER, judge=judge, config=RecallConfig(deadline_seconds=seconds))
            found = await recaller.find(db, tenant_id=tenant_id, memory_id=memory_id, history=QUESTION)
            if found is None:
                continue
            text, items = recall_block(found.items, budget=2000, count_text=lambda t: len(t) // 4)
            shown = {item.key for item in items if isinstance(item, RecalledFact)}
            for item in items:
                if isinstance(item, RecalledFact) and item.retired_by:
                    assert item.retired_by in shown, (seconds, found.provenance, text)
            made.append((found.provenance, text or ""))
    return made


async def test_a_changed_value_is_never_shown_without_its_replacement_whatever_the_deadline(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    talk = Talk(recall_http, key, "changes")
    now = datetime.now(UTC)  # the notes make the memory: no reply yet, so no walk prepared
    await write_note(db, tenant_id, "changes", "before", OLD, now - timedelta(days=2))
    await lane_idle(db, tenant_id)
    await write_note(db, tenant_id, "changes", "after", NEW, now)
    await lane_idle(db, tenant_id)
    retired = await scalar(db, "SELECT retired_by IS NOT NULL FROM facts WHERE tenant_id = :t AND note = :n",
                           t=tenant_id, n=OLD[0]["note"])
    assert retired, "the lane did not retire the old value"

    made = await _blocks(db, tenant_id, "changes")
    # Both ways a recall answers with no walk prepared: the inline walk's, and bare hits at the deadline.
    assert {"inline", "hits"} <= {provenance for provenance, _ in made}, made
    # Through the gateway, after a reply the lane prepared the walk for: the question's own block.
    await talk.turn("Hello, let's plan the launch.", "Thanks, noted.")
    await lane_idle(db, tenant_id)
    talk.transcript.append(QUESTION[0])
    asked = await talk.decorate()
    made += [("decorate", text) for _, text in recall_blocks(asked["request"])]
    assert any("Thursday" in text for _, text in made)  # the question does reach the launch
    for provenance, text in made:
        assert "Wednesday" not in text or "Thursday" in text, (provenance, text)
