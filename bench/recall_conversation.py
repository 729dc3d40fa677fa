"""The recall bench's conversation: weeks of a user working with an assistant, generated from a seed.

Facts are planted early (people, owners, dates, identifiers such as ORD-55120, figures), some change later,
everyday chatter, small facts and tool outputs fill the room, and questions come long after their facts left any
`ceiling`-sized window: direct (the fact's own words), paraphrased (other words), and two-hop (through a bridge
entity: "Dana owns the checkout migration" + "the checkout migration is blocked on the tax table" -> "what is
Dana's project blocked on?"). Each question names the facts that answer it (the current version of a changed
fact) and the replaced versions that must not be shown alone.

    conversation = generate(seed=7, turns=320, ceiling_tokens=6000, count_tokens=counter.count_text)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from recall_chatter import EVERYDAY, chatter, reply, tool_output, tool_request
from recall_facts import BLOCKERS, CITIES, EVENTS, FAMILIES, MONTHS, PEOPLE, PROJECTS, SERVICES, TEAMS, TWO_HOP

__all__ = ["Conversation", "Fact", "Question", "Turn", "generate"]

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
KINDS = ("direct", "paraphrased", "two_hop")


@dataclass(frozen=True)
class Fact:
    id: str
    turn: int
    note: str
    subject: str
    object: str
    keys: tuple[str, ...]   # words that, found together in one sentence, show this fact
    everyday: bool = False
    replaces: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    turn: int
    kind: str
    text: str
    answers: tuple[str, ...]   # fact ids the answer needs (current versions)
    olds: tuple[str, ...] = ()  # replaced versions: shown without their replacement is the failure


@dataclass
class Turn:
    number: int
    at: datetime
    user: str
    reply: str
    tool: str | None = None            # a tool's output, fetched between the user message and the reply
    facts: list[str] = field(default_factory=list)
    question: str | None = None


@dataclass
class Conversation:
    seed: int
    ceiling_tokens: int
    turns: list[Turn]
    facts: dict[str, Fact]
    questions: list[Question]

    def turn(self, number: int) -> Turn:
        return self.turns[number - 1]


class _Draw:
    """Slot values drawn without replacement, so a value's words belong to one fact."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.left = {"person": list(PEOPLE), "project": list(PROJECTS), "blocker": list(BLOCKERS),
                     "team": list(TEAMS), "service": list(SERVICES), "event": list(EVENTS)}
        for pool in self.left.values():
            rng.shuffle(pool)
        self.used: set[str] = set()

    def can(self, slots: tuple[str, ...]) -> bool:
        need: dict[str, int] = {}
        for slot in slots:
            need[slot] = need.get(slot, 0) + 1
        return all(len(self.left[s]) >= n for s, n in need.items() if s in self.left)

    def value(self, slot: str) -> str:
        if slot in self.left:
            return self.left[slot].pop()
        while True:
            value = {"order": lambda: f"ORD-{self.rng.randint(50000, 59999)}",
                     "city": lambda: self.rng.choice(CITIES),
                     "date": lambda: f"{self.rng.choice(MONTHS)} {self.rng.randint(3, 28)}",
                     "amount": lambda: f"{self.rng.randint(12, 480) * 1000:,}",
                     "host": lambda: f"{self.rng.choice(['app', 'db', 'cache', 'worker'])}-"
                                     f"{self.rng.choice(['eu', 'us', 'ap'])}-{self.rng.randint(10, 99)}"}[slot]()
            if slot == "city" or value not in self.used:
                self.used.add(value)
                return value


def _aliases(values: dict[str, str]) -> dict[str, str]:
    out = dict(values)
    for slot, table in (("project", PROJECTS), ("team", TEAMS), ("service", SERVICES), ("event", EVENTS)):
        if slot in values:
            out[slot + "_alias"] = table[values[slot]]
    return out


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.draw = rng, _Draw(rng)
        self.facts: dict[str, Fact] = {}
        self.planned: list[tuple[str, list[str], list[str], str]] = []  # (kind, answers, olds, question text)

    def plant(self, family: str, values: dict[str, str], turn: int, *, update_of: Fact | None = None) -> Fact:
        fam = FAMILIES[family]
        text = (fam.update if update_of else fam.statement).format(**values)
        fact = Fact(f"f{len(self.facts) + 1}", turn, text, values[fam.subject], values[fam.object],
                    (values[fam.anchor], values[fam.value]), replaces=update_of.id if update_of else None)
        self.facts[fact.id] = fact
        return fact


def generate(*, seed: int, turns: int, ceiling_tokens: int, count_tokens: Callable[[str], int],
             questions_per_kind: int = 10, turns_per_day: int = 22) -> Conversation:
    """A conversation of `turns` turns whose questions all come at least `ceiling_tokens` after their facts."""
    rng = random.Random(seed)
    b = _Builder(rng)
    plant_end = max(8, int(turns * 0.5))
    free = list(range(1, plant_end + 1))
    rng.shuffle(free)

    def take(lo: int = 1, hi: int = plant_end) -> int | None:
        for i, t in enumerate(free):
            if lo <= t <= hi:
                return free.pop(i)
        return None

    for kind in KINDS:
        for _ in range(questions_per_kind):
            if kind == "two_hop":
                hop = rng.choice(TWO_HOP)
                fams = (FAMILIES[hop.bridge], FAMILIES[hop.target])
                if not b.draw.can(tuple(s for f in fams for s in f.slots if s != hop.shared) + (hop.shared,)):
                    continue
                shared = b.draw.value(hop.shared)
                bridge_v = _aliases({s: shared if s == hop.shared else b.draw.value(s) for s in fams[0].slots})
                target_v = _aliases({s: shared if s == hop.shared else b.draw.value(s) for s in fams[1].slots})
                t1, t2 = take(), take()
                if t1 is None or t2 is None:
                    break
                bridge, target = b.plant(hop.bridge, bridge_v, t1), b.plant(hop.target, target_v, t2)
                answers, olds = [bridge.id, target.id], []
                if rng.random() < 0.3:
                    t3 = take(lo=max(t1, t2) + 1, hi=int(turns * 0.65))
                    if t3 is not None:
                        newer = b.plant(hop.target, {**target_v, FAMILIES[hop.target].value:
                                                     b.draw.value(FAMILIES[hop.target].value)}, t3, update_of=target)
                        answers, olds = [bridge.id, newer.id], [target.id]
                b.planned.append((kind, answers, olds, hop.question.format(person=bridge_v["person"])))
                continue
            options = [f for f in FAMILIES.values() if b.draw.can(f.slots)]
            if not options:
                break
            fam = rng.choice(options)
            values = _aliases({s: b.draw.value(s) for s in fam.slots})
            t1 = take()
            if t1 is None:
                break
            fact = b.plant(fam.name, values, t1)
            answers, olds = [fact.id], []
            if rng.random() < 0.35:
                t3 = take(lo=t1 + 1, hi=int(turns * 0.65))
                if t3 is not None:
                    newer = b.plant(fam.name, {**values, fam.value: b.draw.value(fam.value)}, t3, update_of=fact)
                    answers, olds = [newer.id], [fact.id]
            template = fam.direct if kind == "direct" else fam.paraphrased
            b.planned.append((kind, answers, olds, template.format(**values)))
    for text, subject, obj in rng.sample(EVERYDAY, len(EVERYDAY)):  # small facts, anywhere, never asked
        t = rng.randint(1, turns)
        fact = Fact(f"e{len(b.facts) + 1}", t, text, subject, obj, (subject, obj), everyday=True)
        b.facts[fact.id] = fact
    return _lay_out(rng, b, turns, ceiling_tokens, count_tokens, turns_per_day, seed)


def _lay_out(rng: random.Random, b: _Builder, turns: int, ceiling: int, count: Callable[[str], int],
             per_day: int, seed: int) -> Conversation:
    by_turn: dict[int, list[Fact]] = {}
    for fact in b.facts.values():
        by_turn.setdefault(fact.turn, []).append(fact)
    out: list[Turn] = []
    seen: set[str] = set()
    at = START
    for number in range(1, turns + 1):
        if number > 1:
            at += timedelta(minutes=rng.randint(6, 24))
            if (number - 1) % per_day == 0:  # next working day, 09:00; weekends are skipped (a sleep)
                at = (at + timedelta(days=1)).replace(hour=9, minute=rng.randint(0, 20))
                while at.weekday() >= 5:
                    at += timedelta(days=1)
        facts = by_turn.get(number, [])
        said = " ".join(f.note for f in sorted(facts, key=lambda f: f.everyday))
        tool = None
        # Every user message differs from the others: Lethe takes the same message sent again as a resend.
        while True:
            if not facts and rng.random() < 0.25:
                user, tool = tool_request(rng), tool_output(rng, at.strftime("%Y-%m-%dT%H:%M:%SZ"))
            else:
                user = (said + " " + chatter(rng)).strip() if rng.random() < 0.5 or not said else said
            if user not in seen:
                break
        seen.add(user)
        out.append(Turn(number, at, user, reply(rng), tool, [f.id for f in facts]))
    # Tokens through the end of each turn, to place every question past its facts by at least `ceiling`.
    ends, total = [], 0
    for turn in out:
        total += sum(count(x) + 4 for x in (turn.user, turn.reply, turn.tool or "") if x)
        ends.append(total)
    questions: list[Question] = []
    open_turns = [t.number for t in out if not t.facts and t.tool is None]
    for index, (kind, answers, olds, text) in enumerate(b.planned):
        last = max(b.facts[f].turn for f in (*answers, *olds))
        # Question turns are shorter than the chatter they replace: keep a margin so the gap still holds after.
        eligible = [t for t in open_turns
                    if t > last + 1 and ends[t - 2] - ends[last - 1] >= 1.5 * ceiling and text not in seen]
        if not eligible:
            continue
        number = rng.choice(eligible)
        open_turns.remove(number)
        turn = out[number - 1]
        turn.user, turn.question = text, f"q{index + 1}"
        seen.add(text)
        turn.reply = "Let me check what I have on that."
        questions.append(Question(turn.question, number, kind, text, tuple(answers), tuple(olds)))
    questions.sort(key=lambda q: q.turn)
    return Conversation(seed, ceiling, out, b.facts, questions)
