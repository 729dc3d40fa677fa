"""The claims bench's conversation: 300 turns of an engineer working with an assistant, with claims of every kind
planted among routine lookups and chatter, and the topics of the corrections coming back long after.

    script = generate(turns=300, seed=11)

Every planted item knows its turn, the note entry the scripted model writes for it when its turns leave, and the
words that show it in a request: a constraint's sentence, a correction's new and old values.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["Item", "Script", "Turn", "generate"]

START = datetime(2026, 9, 7, 9, 0, tzinfo=UTC)  # a Monday

CONSTRAINTS = [
    "Deploys to cluster kc-east-4 must never run on Fridays.",
    "Customer emails must never include the internal ticket ids of queue Q-ops-17.",
    "The billing service bill-core-2 must stay on Python 3.11 until the audit ends.",
    "Every schema change to database pg-ledger-6 needs a second reviewer.",
    "Load tests against gateway api-gw-9 must stay under 500 requests per second.",
    "Nobody may rotate the keys of vault-kms-3 without the security team present.",
    "Refunds above 2,000 EUR through processor pay-eu-8 need the finance lead's approval.",
    "Logs of service auth-edge-5 must be kept for at least 400 days.",
    "The release train rt-ios-12 must not ship on public holidays.",
    "Feature flags of project ff-growth-7 must be removed within 30 days of full rollout.",
]
DECISIONS = [
    ("We chose Kafka topic ord-events-2 for order events, because it already has consumers.", "order events"),
    ("We picked Redis cluster rc-cache-5 for session storage, because its failover is tested.", "session storage"),
    ("We decided to ship the pricing page as variant B-41, because it converted better.", "pricing page"),
    ("We chose vendor Northwind for SMS, because their EU routing is certified.", "SMS vendor"),
    ("We decided the on-call rota moves to weekly shifts from sprint S-88.", "on-call rota"),
    ("We chose Terraform module tf-net-3 for the new VPCs, because it is audited.", "VPC module"),
    ("We decided to freeze the public API at version v2.14 for the quarter.", "public API"),
    ("We picked the Grafana board gf-slo-9 as the single SLO source.", "SLO board"),
    ("We decided the data export runs nightly at 02:30 UTC from job exp-nightly-6.", "data export"),
    ("We chose Postgres 16 for the analytics replica an-rep-1.", "analytics replica"),
]
CORRECTIONS = [  # (topic, old value, new value)
    ("logs bucket of team Atlas", "s3-atlas-logs-1", "s3-atlas-logs-7"),
    ("staging database host", "db-stage-12", "db-stage-15"),
    ("owner of the checkout migration", "Priya Nair", "Tomas Berg"),
    ("timeout of the payments webhook", "30 seconds", "90 seconds"),
    ("region of the Orion cluster", "eu-west-1", "eu-north-1"),
    ("version of the iOS SDK in use", "SDK 8.2.0", "SDK 8.4.1"),
    ("retention of the metrics store", "14 days", "45 days"),
    ("port of the internal admin API", "port 8443", "port 9443"),
    ("budget of the Q4 load test", "1,200 USD", "3,400 USD"),
    ("name of the fraud model in production", "fraud-gbm-3", "fraud-gbm-5"),
]
DEAD_ENDS = [
    "We tried caching search results in CDN edge-c7; it stopped paying past a 40% hit rate.",
    "We tried sharding table tx-audit by month; queries got slower past 12 shards.",
    "We tried batching push notifications in groups of 500; delivery failed above that.",
    "We tried the autoscaler policy as-burst-2; it thrashed under spikes and was dropped.",
    "We tried compressing export files with zstd level 19; it cost more CPU than it saved.",
]
QUESTIONS = [  # (question, settling answer or None)
    ("Which region will host the Acme tenant database?",
     "The Acme tenant database will be hosted in region eu-central-2."),
    ("Who will own the incident review process after the reorg?",
     "Mara Olsen will own the incident review process after the reorg."),
    ("Should the legacy endpoint /v1/orders be kept after March?",
     "The legacy endpoint /v1/orders will be removed at the end of March."),
    ("What is the error budget for the search API next quarter?", None),
    ("Which team takes over the partner onboarding flow?", None),
]
_CHATTER = ["the dashboard layout", "the sprint notes", "the QA checklist", "the release notes", "the runbook",
            "the incident template", "the roadmap slide", "the hiring plan", "the design review", "the test matrix"]


@dataclass
class Item:
    """A planted claim: its kind, the turn it is said in, the note entry written for it, what shows it."""

    id: str
    kind: str
    turn: int
    note: dict[str, Any]
    shows: str               # the text whose presence in a request shows it
    old: str | None = None   # a correction: the old value, never to be shown alone
    back: int | None = None  # a correction: the turn its topic comes back


@dataclass
class Turn:
    number: int
    at: datetime
    user: str
    reply: str
    tool: str | None = None
    items: list[str] = field(default_factory=list)


@dataclass
class Script:
    turns: list[Turn]
    items: dict[str, Item]

    def notes_for(self, first: int, last: int) -> list[dict[str, Any]]:
        """The scripted model's note for these turns: one entry per item said in them (empty when none)."""
        notes = [dict(i.note) for i in self.items.values() if first <= i.turn <= last]
        return notes or [{"note": "", "subject": "", "object": "", "milestone": False}]


def _ident(sentence: str) -> str:
    """The sentence's own identifier (its first word with a digit), so no two items share an entity by accident."""
    return next((w.strip(".,;:?") for w in sentence.split() if any(c.isdigit() for c in w)), sentence.split()[-1])


def _entry(note: str, subject: str, obj: str, kind: str, source: str = "user", **more: Any) -> dict[str, Any]:
    return {"note": note, "subject": subject, "object": obj, "milestone": kind == "decision", "source": source,
            "kind": kind, **more}


def generate(*, turns: int = 300, seed: int = 11) -> Script:
    """The turns and the items planted in them; the same seed gives the same conversation."""
    rng = random.Random(seed)
    plan: dict[int, list[tuple[str, Any]]] = {}
    early = list(range(6, max(52, int(turns * 0.55))))
    rng.shuffle(early)
    slots = iter(sorted(early[:45], key=lambda _: rng.random()))

    def place(kind: str, payload: Any) -> int:
        turn = next(slots)
        plan.setdefault(turn, []).append((kind, payload))
        return turn

    for sentence in CONSTRAINTS:
        place("constraint", sentence)
    for decision in DECISIONS:
        place("decision", decision)
    for correction in CORRECTIONS:
        place("claim", correction)
    for dead in DEAD_ENDS:
        place("dead_end", dead)
    for question in QUESTIONS:
        place("open_question", question)
    free = [t for t in range(3, turns - 2) if t not in plan]
    for number, turn in enumerate(sorted(rng.sample(free, min(60, len(free) // 2)))):
        plan.setdefault(turn, []).append(("lookup", 4100 + number))
    return _build(plan, turns, rng)


def _build(plan: dict[int, list[tuple[str, Any]]], turns: int, rng: random.Random) -> Script:
    items: dict[str, Item] = {}
    later: dict[int, list[tuple[str, Any]]] = {}
    script: list[Turn] = []
    at = START
    for number in range(1, turns + 1):
        # A few minutes a turn, a night now and then: activation follows real time.
        at += timedelta(hours=15) if number % 60 == 0 else timedelta(minutes=rng.randint(2, 9))
        said = [*plan.get(number, []), *later.pop(number, [])]
        user, reply, tool, ids = [], [], None, []
        for kind, payload in said:
            item_id = f"{kind}-{len(items)}"
            if kind == "constraint":
                user.append(f"From now on, a rule: {payload} Please keep to it.")
                reply.append("Understood, I will keep to that rule.")
                items[item_id] = Item(item_id, kind, number, _entry(payload, payload.split(" must")[0].split(
                    " need")[0], _ident(payload), kind), shows=payload)
            elif kind == "decision":
                sentence, topic = payload
                user.append(f"Let's settle the {topic}. {sentence}")
                reply.append(f"Noted the decision on the {topic}.")
                items[item_id] = Item(item_id, kind, number, _entry(sentence, topic, _ident(sentence), kind), sentence)
            elif kind == "claim":
                topic, old, new = payload
                user.append(f"What is the {topic}?")
                reply.append(f"I checked: the {topic} is {old}.")
                items[item_id] = Item(item_id, "claim", number, _entry(
                    f"The {topic} is {old}.", topic, old, "fact", source="assistant"), f"The {topic} is {old}.")
                later.setdefault(min(turns - 1, number + rng.randint(3, 6)), []).append(("correction", payload))
            elif kind == "correction":
                topic, old, new = payload
                user.append(f"That is wrong: the {topic} is {new}, not {old}.")
                reply.append(f"Sorry, corrected: the {topic} is {new}.")
                back = min(turns, number + rng.randint(60, 110))
                items[item_id] = Item(item_id, kind, number, _entry(
                    f"The {topic} is {new}, not {old}.", topic, new, "correction"), shows=new, old=old, back=back)
                later.setdefault(back, []).append(("return", topic))
            elif kind == "return":
                user.append(f"Back to the {payload}: remind me what it is, I need it for the change request.")
                reply.append(f"Looking at the {payload} now.")
            elif kind == "dead_end":
                user.append(f"For the record: {payload}")
                reply.append("Recorded, we will not try that again.")
                tried = payload.split(";")[0].removeprefix("We tried ")
                items[item_id] = Item(item_id, kind, number, _entry(payload, tried, _ident(payload), kind), payload)
            elif kind == "open_question":
                question, answer = payload
                user.append(f"Something nobody has answered yet: {question}")
                reply.append("That is still open; I will keep it on the list.")
                words = question.rstrip("?").split()
                items[item_id] = Item(item_id, kind, number, _entry(question, " ".join(words[-3:]),
                                                                    " ".join(words[1:4]), kind), question)
                if answer is not None:
                    later.setdefault(min(turns - 1, number + rng.randint(40, 90)), []).append(
                        ("answer", (question, answer)))
            elif kind == "answer":
                question, answer = payload
                user.append(f"Good news: {answer}")
                reply.append("Great, that settles the open question.")
                items[item_id] = Item(item_id, kind, number, _entry(
                    answer, answer.split(" will")[0], answer.split()[-1].rstrip("."), "decision", settles=question),
                    answer)
            elif kind == "lookup":
                tool = (f"Ticket LTH-{payload}: status {rng.choice(['open', 'blocked', 'in review', 'done'])}, "
                        f"owner {rng.choice(['Dana', 'Ken', 'Ivo', 'Lena'])}, {rng.randint(1, 40)} comments, "
                        f"last change {rng.randint(1, 28)} September; " + "history entry; " * rng.randint(20, 60))
                user.append(f"Look up ticket LTH-{payload} for me.")
                reply.append(f"Ticket LTH-{payload} is as the record shows.")
                items[item_id] = Item(item_id, "fact", number, _entry(
                    f"Ticket LTH-{payload} was looked up in turn {number}.", f"ticket LTH-{payload}", f"turn {number}",
                    "fact", source="tool"), f"LTH-{payload}")
            ids.append(item_id)
        if not user:
            topic = rng.choice(_CHATTER)
            user.append(f"Turn {number}: let's tidy {topic}. " + "Some context on it. " * rng.randint(8, 30))
            reply.append(f"Done with {topic}; " + "a note on the change. " * rng.randint(8, 30))
        script.append(Turn(number, at, " ".join(user), " ".join(reply), tool, ids))
    return Script(script, items)
