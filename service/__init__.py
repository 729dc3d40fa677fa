"""The use cases behind the gateway: decorate, report, a memory's state and export, the inspector's reads, the
proxy's turn, the outbox relay. No HTTP here: `api/` turns requests into these calls and their answers."""
