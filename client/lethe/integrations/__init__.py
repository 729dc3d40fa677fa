"""Lethe for agent frameworks, each in a module of its own that imports its framework:

- `lethe.integrations.agents`: an OpenAI Agents SDK `Session` whose history is a Lethe memory
  (`pip install "lethe-gateway-client[agents]"`).
- `lethe.integrations.langgraph`: hooks for LangGraph's `create_react_agent` that send the graph's messages
  through decorate and report (`pip install "lethe-gateway-client[langgraph]"`).

This package imports nothing: the client's base install needs neither framework.
"""

from __future__ import annotations

__all__: list[str] = []
