"""The long schemathesis run (`make fuzz`): every phase, many examples, against a gateway you point it at.

    LETHE_URL=http://127.0.0.1:8080 LETHE_KEY=lethe_... LETHE_ADMIN_TOKEN=... .venv/bin/python bench/fuzz.py

Writes the JSON run report under bench/results/ and exits non-zero on any server error, schema violation or
undocumented status. The test suite runs a bounded version (tests/integration/security/test_schemathesis.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHECKS = ("not_a_server_error,status_code_conformance,response_schema_conformance,missing_required_header,"
          "content_type_conformance,response_headers_conformance,unsupported_method,ignored_auth")


def run(url: str, authorization: str, include: str, report: Path) -> int:
    command = [str(Path(sys.executable).parent / "schemathesis"), "run", f"{url}/openapi.json",
               "--phases", "examples,coverage,fuzzing,stateful", "--checks", CHECKS,
               "-H", f"Authorization: {authorization}", "--include-path-regex", include,
               "--max-examples", os.environ.get("FUZZ_EXAMPLES", "300"),
               "--max-time", os.environ.get("FUZZ_SECONDS", "600"), "--continue-on-failure",
               "--report", "ndjson", "--report-ndjson-path", str(report)]
    return subprocess.call(command)


def main() -> int:
    url = os.environ.get("LETHE_URL", "http://127.0.0.1:8080").rstrip("/")
    results = Path(__file__).parent / "results"
    results.mkdir(exist_ok=True)
    failed = run(url, f"Bearer {os.environ['LETHE_KEY']}", "^/(v1/memories|healthz|readyz)",
                 results / "fuzz-memories.ndjson")
    if os.environ.get("LETHE_ADMIN_TOKEN"):
        failed |= run(url, f"Bearer {os.environ['LETHE_ADMIN_TOKEN']}", "^/v1/admin", results / "fuzz-admin.ndjson")
    return failed


if __name__ == "__main__":
    raise SystemExit(main())
