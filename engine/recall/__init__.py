"""Recall, pure: the message split into its parts, rankings fused, the walk's rules and loop, and grouping.

    parts     split_parts: sentences and lines, short ones joined, long ones windowed
    fusion    fuse: reciprocal rank fusion of rankings that share no scale
    walk      WalkRules, leads_on, is_kept, walk (async, I/O passed in as callables), kept_in_order
    grouping  RecalledFact, RecalledPassage, Recalled, admissible, trim, group -> Grouped

The recall block's text is `engine.blocks.recall_block`.
"""
