"""Model-backed work behind small protocols: token counting, embeddings and judgments.

Each has an embedded default that runs offline on one machine and an OpenAI-compatible backend;
`providers.factory` builds them from plain values the caller takes from its settings.
"""
