"""The cross-conversation bench's script: one user's conversations over months, from a seed.

Twenty conversations, a week apart. Facts about the user's work are planted in the first half of the first
twelve (people, owners, dates, identifiers, figures: the recall bench's fact families), eight of them change in a
later conversation, chatter and tool outputs fill each conversation past the bench's ceiling (so its early turns
leave the view and are noted), and forty questions are asked in the last ten conversations, each about facts of
earlier conversations only: the first message of each of those conversations is one.

    script = generate(seed=21, count_tokens=counter.count_text)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from recall_chatter import chatter, reply, tool_output, tool_request
from recall_conversation import Conversation, Fact, Question, Turn, _aliases, _Draw
from recall_facts import FAMILIES

__all__ = ["Script", "generate"]

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday
CONVERSATIONS = 20
TURNS = 36               # turns per conversation: past a 4k ceiling, so the early ones are noted
PLANTING = range(0, 12)  # conversations whose first half plants facts
CHANGING = range(6, 14)  # conversations where a planted fact changes
ASKING = range(10, 20)   # conversations that ask (4 questions each)
FACTS, CHANGES, QUESTIONS = 40, 8, 40


@dataclass
class Script:
    """The whole of it as one `Conversation` (global turn numbers, so the recall bench's scoring applies), and
    where each conversation starts and ends in it."""

    conversation: Conversation
    spans: list[tuple[int, int]]  # (first, last) global turn of each conversation

    def memory_of(self, number: int) -> int:
        return next(i for i, (first, last) in enumerate(self.spans) if first <= number <= last)

    def local(self, number: int) -> int:
        """The turn's number within its own conversation (Lethe counts each memory's turns from 1)."""
        return number - self.spans[self.memory_of(number)][0] + 1


def generate(*, seed: int, count_tokens: Callable[[str], int] | None = None) -> Script:
    rng = random.Random(seed)
    draw = _Draw(rng)
    facts: dict[str, Fact] = {}
    slots: dict[tuple[int, int], list[Fact]] = {}  # (conversation, local turn) -> facts said there

    def free_turn(conversation: int, lo: int, hi: int) -> int:
        taken = [t for (c, t) in slots if c == conversation]
        options = [t for t in range(lo, hi + 1) if t not in taken]
        return rng.choice(options)

    planted: list[tuple[Fact, dict[str, str]]] = []
    for index in range(FACTS):
        options = [f for f in FAMILIES.values() if draw.can(f.slots)]
        family = rng.choice(options)
        values = _aliases({s: draw.value(s) for s in family.slots})
        conversation = PLANTING[index % len(PLANTING)]
        turn = free_turn(conversation, 2, TURNS // 2 - 2)
        fact = Fact(f"f{len(facts) + 1}", 0, family.statement.format(**values), values[family.subject],
                    values[family.object], (values[family.anchor], values[family.value]))
        facts[fact.id] = fact
        slots[(conversation, turn)] = [fact]
        planted.append((fact, values | {"family": family.name, "at": f"{conversation}:{turn}"}))

    current = {fact.id: fact for fact, _ in planted}  # original id -> current version
    changeable = [(f, v) for f, v in planted if int(v["at"].split(":")[0]) < CHANGING[-1]]
    for fact, values in rng.sample(changeable, CHANGES):
        family = FAMILIES[values["family"]]
        first = int(values["at"].split(":")[0])
        conversation = rng.choice([c for c in CHANGING if c > first])
        turn = free_turn(conversation, 2, TURNS // 2 - 2)
        changed = {**values, family.value: draw.value(family.value)}
        newer = Fact(f"f{len(facts) + 1}", 0, family.update.format(**changed), changed[family.subject],
                     changed[family.object], (changed[family.anchor], changed[family.value]), replaces=fact.id)
        facts[newer.id] = newer
        slots[(conversation, turn)] = [newer]
        current[fact.id] = newer

    # Questions: each about a fact whose every version was said in an earlier conversation.
    asks: list[tuple[int, int, str, str, Fact, Fact | None]] = []
    order = list(planted)
    rng.shuffle(order)
    ask_turns = [1, 9, 18, 27]
    kinds = ["direct", "paraphrased"]
    for conversation in ASKING:
        for turn in ask_turns:
            for pick, (fact, values) in enumerate(order):
                newest = current[fact.id]
                said_in = max([int(values["at"].split(":")[0]),
                               *(c for (c, _), fs in slots.items() if newest in fs)])
                if said_in < conversation:
                    order.pop(pick)
                    break
            else:
                continue
            family = FAMILIES[values["family"]]
            kind = kinds[len(asks) % 2]
            text = (family.direct if kind == "direct" else family.paraphrased).format(**values)
            asks.append((conversation, turn, kind, text, newest, fact if newest is not fact else None))
    asks = asks[:QUESTIONS]

    turns: list[Turn] = []
    questions: list[Question] = []
    spans: list[tuple[int, int]] = []
    seen: set[str] = set()
    asked = {(c, t): (kind, text, newest, old) for c, t, kind, text, newest, old in asks}
    for conversation in range(CONVERSATIONS):
        at = (START + timedelta(weeks=conversation)).replace(minute=rng.randint(0, 30))
        first = len(turns) + 1
        for local in range(1, TURNS + 1):
            if local > 1:
                at += timedelta(minutes=rng.randint(3, 12))
            number = len(turns) + 1
            here = slots.get((conversation, local), [])
            tool = None
            question = asked.get((conversation, local))
            if question is not None:
                kind, text, newest, old = question
                user, answer = text, "Let me check what I have on that."
                questions.append(Question(f"q{len(questions) + 1}", number, kind, text, (newest.id,),
                                          (old.id,) if old else ()))
            else:
                while True:
                    said = " ".join(f.note for f in here)
                    if not here and rng.random() < 0.3:
                        user, tool = tool_request(rng), tool_output(rng, at.strftime("%Y-%m-%dT%H:%M:%SZ"))
                    else:
                        user = (said + " " + chatter(rng)).strip() if said else chatter(rng)
                    if user not in seen:
                        break
                answer = reply(rng)
            seen.add(user)
            for fact in here:
                facts[fact.id] = Fact(fact.id, number, fact.note, fact.subject, fact.object, fact.keys,
                                      replaces=fact.replaces)
            turns.append(Turn(number, at, user, answer, tool, [f.id for f in here],
                              questions[-1].id if question is not None else None))
        spans.append((first, len(turns)))
    return Script(Conversation(seed, 0, turns, facts, questions), spans)
