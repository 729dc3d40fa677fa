"""Connecting to Temporal with Lethe's settings, and registering Lethe's search attributes."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest, ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.runtime import LogForwardingConfig, LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import TLSConfig

from cli.converter import lethe_data_converter
from cli.telemetry import temporal_interceptors
from config.groups import TemporalSettings
from contracts.lane_names import ALL_ATTRIBUTES

__all__ = ["connect_temporal", "register_search_attributes", "sdk_runtime"]


def _tls(settings: TemporalSettings) -> TLSConfig | bool:
    if settings.tls_cert or settings.tls_key or settings.tls_ca:
        def read(path: Path | None) -> bytes | None:
            return None if path is None else path.read_bytes()

        return TLSConfig(
            server_root_ca_cert=read(settings.tls_ca),
            client_cert=read(settings.tls_cert),
            client_private_key=read(settings.tls_key),
        )
    # An API key (Temporal Cloud) always travels over TLS.
    return settings.tls or settings.api_key is not None


@functools.cache
def sdk_runtime() -> Runtime:
    """One per process, for every client and worker: the SDK core's own log lines (a poll retried while Temporal
    is away, say) go through Python's logging, so they are JSON lines like every other in production, rather
    than coloured text the core writes to stdout by itself."""
    return Runtime(telemetry=TelemetryConfig(logging=LoggingConfig(
        filter=TelemetryFilter(core_level="WARN", other_level="ERROR"),
        forwarding=LogForwardingConfig(logger=logging.getLogger("temporalio.core")),
    )))


async def connect_temporal(settings: TemporalSettings, *, lazy: bool = False) -> Client:
    """A client with the pydantic converter. `lazy` lets the gateway start while Temporal is down."""
    api_key = settings.api_key.get_secret_value() if settings.api_key else None
    return await Client.connect(
        settings.address,
        namespace=settings.namespace,
        api_key=api_key,
        tls=_tls(settings),
        data_converter=lethe_data_converter,
        interceptors=temporal_interceptors(),
        lazy=lazy,
        runtime=sdk_runtime(),
    )


async def register_search_attributes(client: Client, namespace: str) -> list[str]:
    """Add whichever of Lethe's search attributes the namespace lacks; returns the names added."""
    existing = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=namespace)
    )
    known = set(existing.custom_attributes) | set(existing.system_attributes)
    missing = {
        attribute.name: IndexedValueType.Value(f"INDEXED_VALUE_TYPE_{attribute.kind.upper()}")
        for attribute in ALL_ATTRIBUTES
        if attribute.name not in known
    }
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=namespace, search_attributes=missing)
        )
    return sorted(missing)
