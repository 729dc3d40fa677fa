"""Reading the embedded Postgres's log for the line that says why it crashed (what `lethe dev` prints)."""

from __future__ import annotations

from store.embedded import crash_lines, explain_crash

# The log of the crash that started this: pgvector built for AVX-512 on a CPU without it.
SIGILL_LOG = """\
2026-12-01 10:00:00.100 UTC [5700] LOG:  database system is ready to accept connections
2026-12-01 10:04:12.311 UTC [5700] LOG:  client backend (PID 5712) was terminated by signal 4: Illegal instruction
2026-12-01 10:04:12.311 UTC [5700] DETAIL:  Failed process was running: INSERT INTO entities (memory_pk, tenant_id)
2026-12-01 10:04:12.311 UTC [5700] LOG:  terminating any other active server processes
2026-12-01 10:04:12.320 UTC [5700] LOG:  all server processes terminated; reinitializing
"""


def test_crash_lines_finds_the_signal_and_nothing_else() -> None:
    assert crash_lines(SIGILL_LOG) == [
        "2026-12-01 10:04:12.311 UTC [5700] LOG:  client backend (PID 5712) was terminated by signal 4: "
        "Illegal instruction"
    ]
    quiet = ("LOG:  checkpoint complete: wrote 3 buffers\nLOG:  database system is shut down\n"
             'LOG:  background worker "logical replication launcher" (PID 7) exited with exit code 1\n')
    assert crash_lines(quiet) == []


def test_explain_crash_names_the_cause_a_user_can_act_on() -> None:
    [line] = crash_lines(SIGILL_LOG)
    assert "CPU instructions this machine lacks" in explain_crash(line)
    assert "out-of-memory" in explain_crash("LOG:  client backend (PID 9) was terminated by signal 9: Killed")
    assert "signal 15" in explain_crash("LOG:  server process (PID 9) was terminated by signal 15: Terminated")
    assert "recovers by itself" in explain_crash("LOG:  background writer process (PID 9) exited with exit code 2")
