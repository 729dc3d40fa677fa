"""One decorate, start to finish: the hot path hands in what the store holds and gets back the plan and the
request the model will see.

In order: acknowledged episodes whose last turn is over seal; if the request would pass the ceiling while a
note ask is unanswered, the leaving episodes seal without facts; a sleep (24 h since the last user message,
or one owed since a fade was in progress) or a view over its budget fades to the landing, cutting the closed
history the lane has judged into episodes first; the request is assembled and checked against the ceiling.

Modules: `view` (what is in view and what it weighs), `ceiling` (sealing to stay under the ceiling), `turns`
(the turn in progress and assembly), `records` (`StoredMemory`, `Decided`, `DecoratePlan`), `plan` (`decide`, `finish`).
"""

from engine.decorate.plan import decide, decorate, finish
from engine.decorate.records import Decided, DecoratePlan, PlanCore, StoredMemory
from engine.decorate.view import ViewSizes, facts_in_block, in_view_and_recent, visible_messages

__all__ = [
    "DecoratePlan", "Decided", "PlanCore", "StoredMemory", "ViewSizes", "decide", "decorate", "facts_in_block",
    "finish", "in_view_and_recent", "visible_messages",
]
