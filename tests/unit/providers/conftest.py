"""Provider unit tests run offline: the hub is told so, and any connection off this machine fails the test."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator

import pytest

from providers.embedder import CachingEmbedder, LocalEmbedder
from providers.local_judge import LocalJudge

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise OSError(f"network blocked in provider tests: {host}")
        except ValueError as exc:  # a host name, which would need DNS: also off this machine
            if host != "localhost":
                raise OSError(f"network blocked in provider tests: {host}") from exc
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture(scope="session")
def local_embedder() -> CachingEmbedder:
    return CachingEmbedder(LocalEmbedder(threads=2))


@pytest.fixture(scope="session")
def local_judge(local_embedder: CachingEmbedder) -> LocalJudge:
    return LocalJudge(local_embedder)
