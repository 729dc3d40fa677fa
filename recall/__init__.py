"""Recall: what the memory holds that the agent's next message may need, found and placed before it.

Two sides share one walk and one set of numbers (`recall.config.RecallConfig`):

- the gateway's find (`recall.find.Recaller`), in the hot path, for a new user message, under a deadline
  (`recall.deadline` holds what lets a find stop between queries without losing its connections), searching
  with `recall.search` and walking inline when the lane prepared nothing;
- the lane's work, run as Temporal activities by `activities.recall`: `recall.prepare.prepare_walk` after a
  reply, so the next message finds its walk ready, and `recall.distill.distill_blocks` once the next message
  has come, rereading each placed block against the turn it served.

The walk itself (`recall.walking`) is the engine's pure loop (`engine.recall.walk`) over the graph, with its
rating and neighbour reads written once for both sides. Nothing here knows Temporal, HTTP or SQL: the store's
repositories do the reading and writing.
"""
