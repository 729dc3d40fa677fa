"""What the gateway's routes call, opened once per process from the gateway's options: the database pool, the
Temporal client and the outbox relay, the hot path's context, the key cache, the proxy's upstreams and the
housekeeping loop."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from providers.factory import make_token_counter
from providers.upstream import UpstreamPool
from service.context import HotPath
from service.housekeeping import Housekeeping
from service.options import GatewayOptions
from service.proxy.addresses import UpstreamAddresses
from service.proxy.upstreams import ProxyContext
from service.relay import OutboxRelay, TemporalClient
from service.tenant_keys import TenantKeys
from store.db import Database
from store.secrets import SecretBox

__all__ = ["GatewayServices"]


@dataclass(frozen=True)
class GatewayServices:
    options: GatewayOptions
    db: Database
    temporal: TemporalClient
    relay: OutboxRelay
    hot_path: HotPath
    tenant_keys: TenantKeys
    proxy: ProxyContext
    housekeeping: Housekeeping

    @classmethod
    async def open(cls, options: GatewayOptions) -> GatewayServices:
        database, gateway = options.database, options.gateway
        db = Database(database.url, pool_size=database.pool_size, role=database.role or None, strict=True,
                      pool_timeout=database.pool_timeout_seconds)
        temporal = await options.connect_temporal()
        return cls(
            options=options, db=db, temporal=temporal,
            relay=OutboxRelay(db, temporal, task_queue=options.temporal.task_queue),
            hot_path=HotPath(db=db, counter=make_token_counter(), config=options.mechanism,
                             recaller=options.recaller),
            tenant_keys=TenantKeys(db),
            proxy=ProxyContext(db=db, pool=UpstreamPool(timeout=gateway.upstream_timeout_seconds),
                               box=SecretBox(gateway.secret_key.get_secret_value()),
                               allow_url_header=gateway.upstream_url_header,
                               addresses=UpstreamAddresses(gateway.upstream_url_allow)),
            housekeeping=Housekeeping(db, keep=timedelta(hours=gateway.idempotency_hours)),
        )

    def start(self) -> None:
        """The background loops: the relay and the housekeeping."""
        self.relay.start()
        self.housekeeping.start()

    async def close(self) -> None:
        await self.housekeeping.stop()
        await self.relay.stop()
        await self.proxy.pool.close()
        await self.db.dispose()
