"""The embedded judge's acts: what kind of moment an episode was, by rules over who said which words.

An episode reaches the judge as `role: text` lines. Cues are read only where their speaker makes them count:
a correction in the user's words, a retraction in the assistant's, a decision in the user's (or the assistant
stating one that was made). Several acts in one episode: the one with the highest floor wins. With no cue,
greetings and thanks alone are small talk, a question is a lookup, anything else is a task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.salience import ACT_FLOORS, Act
from providers.judge import ActVerdict

__all__ = ["act_of", "acts_of", "speakers"]

_CORRECTION = re.compile("|".join((
    r"^\s*(no|nope|nah)\b\s*[,.!;:-]",
    r"\b(that|this|it|you)('s|'re| is| are| was| were) (wrong|incorrect|not right|not correct|not true|mistaken)\b",
    r"\byou (got|have) (it|that|this) wrong\b",
    r"\byou (misunderstood|misread|mixed up|confused)\b",
    r"\bi (said|meant|told you)\b",
    r"\bnot \w+(?: \w+)?,? but\b",
    r"\b(correction|to correct)\b",
    r"\b(moved|changed|switched) to\b",
    r"\bactually,? (it|the|we|i|that|she|he|they)\b",
    r"\binstead of\b",
)))
_RETRACTION = re.compile("|".join((
    r"\bi apologi[sz]e\b",
    r"\bsorry,? (i|my|that was)\b",
    r"\bmy (mistake|bad|error)\b",
    r"\bi was (wrong|mistaken|incorrect)\b",
    r"\bi made (a|an) (mistake|error)\b",
    r"\bi (misspoke|misread|misunderstood)\b",
    r"\b(let me correct|correction:|i stand corrected)\b",
    r"\byou'?re right,? (i|my|that)\b",
)))
_DECISION = re.compile("|".join((
    r"\b(let'?s|we'?ll|we will|i'?ll) go with\b",
    r"\b(decided|decision|agreed|approve|approved|sign off|signed off|ship it|finali[sz]ed?|settled|confirmed)\b",
    r"\b(we|i) (chose|choose|pick|picked)\b",
)))
# What the assistant may say of a decision made: only in the first person, not reporting someone else's.
_STATED_DECISION = re.compile(r"\b(we|i)('ve| have)? (decided|agreed|settled)\b")
_SMALL_TALK = re.compile(
    r"^(hi|hey|hello|yo|good (morning|afternoon|evening|night)|thanks|thank you|thx|cheers|bye|see you|"
    r"how are you|how'?s it going|lol|haha|nice|cool|great|ok|okay|awesome|have a (nice|good))\b")
_QUESTION = re.compile(
    r"\?|^(what|what's|whats|where|when|who|whose|which|how (many|much|long|far|often)|is|are|does|do|did|can you "
    r"(check|find|look|tell)|look up|find|check|show me|list|remind me)\b")
_TASK = re.compile(
    r"\b(write|create|draft|implement|fix|build|add|update|change|make|refactor|deploy|send|schedule|plan|design|"
    r"rename|remove|delete|migrate|set up|configure|prepare|generate)\b")


def speakers(text: str) -> list[tuple[str, str]]:
    """(role, text) per message of `role: text` lines; a line without a role continues the message before."""
    said: list[tuple[str, str]] = []
    for line in text.splitlines():
        role, sep, rest = line.partition(": ")
        if sep and role and " " not in role and role.replace("_", "").isalpha():
            said.append((role.lower(), rest))
        elif said:
            said[-1] = (said[-1][0], f"{said[-1][1]}\n{line}")
    return said


def act_of(text: str) -> ActVerdict:
    """The act of one episode's `role: text` lines (engine.texts.messages_text)."""
    said = speakers(text)
    user = [t.lower().strip() for role, t in said if role == "user"]
    assistant = [t.lower().strip() for role, t in said if role == "assistant"]
    found: list[Act] = []
    if any(_CORRECTION.search(t) for t in user):
        found.append(Act.CORRECTION)
    if any(_DECISION.search(t) for t in user) or any(_STATED_DECISION.search(t) for t in assistant):
        found.append(Act.DECISION)
    if any(_RETRACTION.search(t) for t in assistant):
        found.append(Act.SELF_CORRECTION)
    if found:
        return ActVerdict(act=max(found, key=lambda a: ACT_FLOORS[a]), score=0.8)
    if user and all(_SMALL_TALK.search(t) and len(t.split()) <= 12 for t in user):
        return ActVerdict(act=Act.SMALL_TALK, score=0.7)
    if user and any(_QUESTION.search(t) for t in user) and not any(_TASK.search(t) for t in user):
        return ActVerdict(act=Act.LOOKUP, score=0.7)
    return ActVerdict(act=Act.TASK, score=0.5)


def acts_of(texts: Sequence[str]) -> list[ActVerdict]:
    return [act_of(t) for t in texts]
