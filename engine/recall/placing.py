"""This turn's recall block as decorate places it: with what the facts block and the earlier blocks in view show
now, placed again when this call's fade changes that, and trimmed when the request would pass the ceiling, so
recall never makes a decorate fail."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from engine.blocks.recall_block import recall_block
from engine.config import MechanismConfig
from engine.recall.grouping import Recalled

__all__ = ["earlier_blocks_within", "Placing", "block_budget"]


def block_budget(config: MechanismConfig, *, asks_about_past: bool = False) -> int:
    """The block's most tokens: the setting, and never more than a small share of the ceiling; larger for a
    message that asks about the past."""
    if asks_about_past:
        return min(config.recall_question_block_tokens,
                   int(config.ceiling_tokens * config.recall_question_block_max_fraction))
    return min(config.recall_block_tokens, int(config.ceiling_tokens * config.recall_block_max_fraction))


def earlier_blocks_within(blocks: Mapping[int, str], tokens: Callable[[str], int], limit: int) -> dict[int, str]:
    """Earlier turns' blocks (by the seq of the message they stand before), the newest first while their tokens
    stay within `limit`: the oldest go first, and a block that does not fit ends the list."""
    kept: dict[int, str] = {}
    total = 0
    for seq in sorted(blocks, reverse=True):
        total += tokens(blocks[seq])
        if total > limit:
            break
        kept[seq] = blocks[seq]
    return kept


class Placing:
    def __init__(self, recall: Sequence[Recalled], *, in_view: frozenset[int], budget: int,
                 count_text: Callable[[str], int]) -> None:
        self.recall, self.in_view, self.budget, self.count_text = recall, in_view, budget, count_text
        self.text: str | None = None
        self.items: tuple[Recalled, ...] = ()

    @property
    def tokens(self) -> int:
        return self.count_text(self.text) if self.text is not None else 0

    def place(self, in_facts_block: frozenset[str], *, budget: int | None = None) -> int:
        """Place the block; returns how many tokens it grew by (negative when it shrank)."""
        before = self.tokens
        text, kept = recall_block(self.recall, budget=self.budget if budget is None else budget,
                                  count_text=self.count_text, in_facts_block=in_facts_block, in_view=self.in_view)
        self.text, self.items = text, tuple(kept) if text is not None else ()
        return self.tokens - before
