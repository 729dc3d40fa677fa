"""Planning one call's memory: the hot path hands in what the store holds, `decide` plans everything but the
recall block (saved while recall is still finding it), and `finish` places the block and assembles the request
the model will see.

In order: acknowledged episodes whose last turn is over seal; if the request would pass the ceiling while a
note ask is unanswered, the leaving episodes seal without facts; a sleep (24 h since the last user message,
or one owed since a fade was in progress) or a view over its budget fades to the landing, cutting the closed
history the lane has judged into episodes first; the request is assembled and checked against the ceiling.

Modules: `view` (what is in view and what it weighs), `ceiling` (sealing to stay under the ceiling), `turns`
(the turn in progress and assembly), `records` (`StoredMemory`, `Decided`, `DecoratePlan`), `plan` (`decide`, `finish`).
"""

from engine.planning.plan import decide, finish
from engine.planning.records import Decided, DecoratePlan, PlanCore, StoredMemory
from engine.planning.view import ViewSizes, facts_in_block, in_view_and_recent, visible_messages

__all__ = [
    "DecoratePlan", "Decided", "PlanCore", "StoredMemory", "ViewSizes", "decide", "facts_in_block",
    "finish", "in_view_and_recent", "visible_messages",
]
