"""One history, whatever the agent resends: a request that replaces the last user message no reply followed (an
edited message, a regenerate, a retry with new text) leaves one copy of the history, and the replaced
decorate's report is refused."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from config.settings import Settings
from store.db import Database
from store.models import MessageRow, ReplacedMessageRow
from tests.support import free_port, serve_gateway


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _chat(*contents: str) -> dict[str, Any]:
    roles = ["user", "assistant"]
    return {"model": "gpt-4o-mini", "messages": [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]}


def _reply(text: str) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": text}}]}


async def _stored(db: Database, tenant_id: str, model: Any) -> list[dict[str, Any]]:
    async with db.session() as session:
        rows = await session.execute(select(model.body).where(model.tenant_id == tenant_id).order_by(model.id))
        return list(rows.scalars())


async def _five_answered_turns(http: httpx.AsyncClient, key: str, path: str) -> list[str]:
    """Five turns decorated and reported: ten messages."""
    history: list[str] = []
    for turn in range(5):
        history.append(f"Question {turn} about the rollout?")
        answer = await http.post(f"{path}/decorate", json=_chat(*history), headers=_auth(key))
        history.append(f"Answer {turn}.")
        reported = await http.post(f"{path}/report", headers=_auth(key), json={
            "decorate_id": answer.json()["decorate_id"], "response": _reply(history[-1])})
        assert reported.status_code == 200
    return history


async def test_a_hundred_replaced_user_messages_leave_one_history_and_refuse_their_reports(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    path = "/v1/memories/edits"
    history = await _five_answered_turns(http, key, path)
    before = await http.get("/v1/memories/edits", headers=_auth(key))
    turns = before.json()["turns"]

    ids = []
    for attempt in range(100):  # each ends in another user message; none is reported
        answer = await http.post(f"{path}/decorate", json=_chat(*history, f"Edited question, take {attempt}"),
                                 headers=_auth(key))
        assert answer.status_code == 200, answer.text
        ids.append(answer.json()["decorate_id"])

    stored = await _stored(db, tenant_id, MessageRow)
    assert [m["content"] for m in stored] == [*history, "Edited question, take 99"]
    replaced = await _stored(db, tenant_id, ReplacedMessageRow)
    assert [m["content"] for m in replaced] == [f"Edited question, take {n}" for n in range(99)]
    state = (await http.get("/v1/memories/edits", headers=_auth(key))).json()
    assert state["messages"] == 11 and state["turns"] == turns + 1

    # A superseded decorate's report: 409 naming it, and nothing stored.
    refused = await http.post(f"{path}/report", headers=_auth(key), json={
        "decorate_id": ids[0], "response": _reply("Too late.")})
    assert refused.status_code == 409 and ids[0] in refused.json()["error"]["message"], refused.text
    assert len(await _stored(db, tenant_id, MessageRow)) == 11
    # The latest one reports as usual.
    last = await http.post(f"{path}/report", headers=_auth(key), json={
        "decorate_id": ids[-1], "response": _reply("Answered at last.")})
    assert last.status_code == 200
    async with db.session() as session:
        count = select(func.count()).select_from(MessageRow).where(MessageRow.tenant_id == tenant_id)
        assert (await session.execute(count)).scalar_one() == 12
    exported = (await http.get(f"{path}/export", headers=_auth(key))).json()
    assert len(exported["replaced_messages"]) == 99


async def test_an_edited_earlier_message_is_stored_as_an_edit_and_its_branch_goes_on_without_copies(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    path = "/v1/memories/branching"
    history = await _five_answered_turns(http, key, path)

    # The user edits their third question: the agent resends the history up to it, and the edited one.
    branch = [*history[:4], "Question 2, said otherwise?"]
    edited = await http.post(f"{path}/decorate", json=_chat(*branch), headers=_auth(key))
    assert edited.status_code == 200, edited.text
    assert (await http.post(f"{path}/report", headers=_auth(key), json={
        "decorate_id": edited.json()["decorate_id"], "response": _reply("Answer 2, again.")})).status_code == 200
    branch.append("Answer 2, again.")
    # The new branch goes on: its requests line up with what is stored; nothing is stored twice.
    for turn in (5, 6):
        branch.append(f"Question {turn} on the new branch?")
        answer = await http.post(f"{path}/decorate", json=_chat(*branch), headers=_auth(key))
        assert answer.status_code == 200, answer.text
        branch.append(f"Answer {turn}.")
        assert (await http.post(f"{path}/report", headers=_auth(key), json={
            "decorate_id": answer.json()["decorate_id"], "response": _reply(branch[-1])})).status_code == 200

    stored = await _stored(db, tenant_id, MessageRow)
    assert [m["content"] for m in stored] == [*history, *branch[4:]]
    rows = (await http.get(f"{path}/export", headers=_auth(key))).json()["messages"]
    assert [(r["seq"], r["edit_of"]) for r in rows if r["edit_of"] is not None] == [(11, 5)]


async def test_a_replica_whose_cache_held_the_replaced_message_reads_the_history_again(
    http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, settings: Settings
) -> None:
    tenant_id, key = tenant
    path = "/v1/memories/replicas"
    history = await _five_answered_turns(http, key, path)
    asked = await http.post(f"{path}/decorate", json=_chat(*history, "First wording?"), headers=_auth(key))
    assert asked.status_code == 200  # this gateway now caches the history with "First wording?" at its end
    async with serve_gateway(settings.replace(port=free_port())) as other_url, \
            httpx.AsyncClient(base_url=other_url, timeout=60) as other:
        replaced = await other.post(f"{path}/decorate", json=_chat(*history, "Second wording?"),
                                    headers=_auth(key))
        assert replaced.status_code == 200, replaced.text
    # The agent's retry of the same request reaches the first gateway: it holds nothing new to store.
    again = await http.post(f"{path}/decorate", json=_chat(*history, "Second wording?"),
                            headers={**_auth(key), "Idempotency-Key": "retry-on-the-first-replica"})
    assert again.status_code == 200, again.text
    stored = await _stored(db, tenant_id, MessageRow)
    assert [m["content"] for m in stored] == [*history, "Second wording?"]
    assert [m["content"] for m in await _stored(db, tenant_id, ReplacedMessageRow)] == ["First wording?"]
