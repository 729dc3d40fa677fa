#!/usr/bin/env python3
"""Container health check for every Lethe role, with the standard library only (no curl in the image).

Usage: lethe-healthcheck [URL ...]. Without URLs it tries the gateway's /healthz on LETHE_PORT, then the
worker's on LETHE_WORKER_HEALTH_PORT, so one image-level HEALTHCHECK fits both roles.
Exits 0 when any URL answers 2xx.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def default_urls() -> list[str]:
    gateway = os.environ.get("LETHE_PORT", "8080")
    worker = os.environ.get("LETHE_WORKER_HEALTH_PORT", "8081")
    return [f"http://127.0.0.1:{port}/healthz" for port in (gateway, worker) if port not in ("", "0")]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=4) as response:
            return 200 <= response.status < 300
    except (urllib.error.URLError, OSError, ValueError):
        return False


def main(argv: list[str]) -> int:
    urls = argv or default_urls()
    return 0 if any(healthy(url) for url in urls) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
