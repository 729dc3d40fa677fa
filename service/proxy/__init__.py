"""The proxy's turn: decorate, the upstream call, report."""
