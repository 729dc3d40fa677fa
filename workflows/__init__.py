"""The memory workflow: signals, the ordered lane, search attributes, continue-as-new. Deterministic."""
