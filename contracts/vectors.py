"""The width of every vector Lethe stores: the embedders produce it and the graph's columns hold it."""

__all__ = ["DIMENSIONS"]

DIMENSIONS = 384
