"""Dependencies routes declare: the gateway's options and services, the caller's tenant, the request's clock.

Every one is `async def`, even the ones that only read `app.state`: FastAPI runs a plain `def` dependency on its
thread pool, and those hand-offs cost a proxied call about 4 ms before its route ran on two busy cores.
"""

from __future__ import annotations

import hmac
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import Depends, Header, Path, Request

from api.schemas import MEMORY_ID_PATTERN
from contracts.errors import InvalidInput, Unauthorized
from service.clock import Clock
from service.context import HotPath
from service.gateway import GatewayServices
from service.options import GatewayOptions
from service.proxy.upstreams import ProxyContext
from service.relay import OutboxRelay
from service.tenant_keys import TenantKeys, act_for_admin, act_for_tenant

__all__ = [
    "AdminDep",
    "AnthropicTenantDep",
    "ClockDep",
    "ServicesDep",
    "HotPathDep",
    "AgentHeader",
    "MemoryIdDep",
    "UserHeader",
    "OptionsDep",
    "ProxyDep",
    "RelayDep",
    "TenantDep",
]


async def _options(request: Request) -> GatewayOptions:
    return request.app.state.options  # type: ignore[no-any-return]


async def _services(request: Request) -> GatewayServices:
    return request.app.state.services  # type: ignore[no-any-return]


async def _hot_path(request: Request) -> HotPath:
    return request.app.state.services.hot_path  # type: ignore[no-any-return]


async def _relay(request: Request) -> OutboxRelay:
    return request.app.state.services.relay  # type: ignore[no-any-return]


async def _proxy(request: Request) -> ProxyContext:
    return request.app.state.services.proxy  # type: ignore[no-any-return]


OptionsDep = Annotated[GatewayOptions, Depends(_options)]
ServicesDep = Annotated[GatewayServices, Depends(_services)]
RelayDep = Annotated[OutboxRelay, Depends(_relay)]
HotPathDep = Annotated[HotPath, Depends(_hot_path)]
ProxyDep = Annotated[ProxyContext, Depends(_proxy)]


def _bearer(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("missing Authorization header; send `Authorization: Bearer <api key>`")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("the Authorization header must be `Bearer <api key>`")
    return token.strip()


async def _tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    return await _tenant_for(request, _bearer(authorization))


async def _tenant_by_either(request: Request, authorization: Annotated[str | None, Header()] = None,
                            x_api_key: Annotated[str | None, Header(alias="x-api-key")] = None) -> str:
    # Anthropic's SDKs send their key as `x-api-key`: the Messages proxy takes the tenant's key there too.
    if authorization is None and x_api_key:
        return await _tenant_for(request, x_api_key.strip())
    return await _tenant_for(request, _bearer(authorization))


async def _tenant_for(request: Request, key: str) -> str:
    keys: TenantKeys = request.app.state.services.tenant_keys
    tenant_id = await keys.tenant_for(key)
    if tenant_id is None:
        raise Unauthorized("unknown or revoked API key")
    request.app.state.limits.admit(tenant_id)
    act_for_tenant(tenant_id)
    return tenant_id


async def _admin(options: OptionsDep, authorization: Annotated[str | None, Header()] = None) -> None:
    token = _bearer(authorization)
    admin_token = options.gateway.admin_token.get_secret_value().encode()
    if not options.gateway.admin_enabled or not hmac.compare_digest(token.encode(), admin_token):
        raise Unauthorized("admin calls need the admin token (LETHE_ADMIN_TOKEN)")
    act_for_admin()


async def _memory_id(memory_id: Annotated[str, Path(pattern=MEMORY_ID_PATTERN.pattern)]) -> str:
    if not MEMORY_ID_PATTERN.match(memory_id):
        raise InvalidInput("memory ids are 1-128 of A-Z a-z 0-9 . _ : -", field="memory_id")
    return memory_id


CLOCK_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
CLOCK_AHEAD = timedelta(days=50 * 365)


# What the OpenAPI document promises X-Lethe-Now accepts: RFC 3339, years 2000-2075 (the bounds below).
CLOCK_PATTERN = (r"^(20[0-6]\d|207[0-5])-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                 r"(\.\d{1,6})?(Z|[+-](0\d|1[0-3]):[0-5]\d)$")


# Typed `str` (absent is None): the document then offers no `null` a client could send as the text "null".
ClockHeader = Annotated[str, Header(alias="X-Lethe-Now", json_schema_extra={"pattern": CLOCK_PATTERN})]


async def _clock(options: OptionsDep, x_lethe_now: ClockHeader = None) -> Clock:  # type: ignore[assignment]
    now = datetime.now(UTC)
    if x_lethe_now is None:
        return Clock(now)
    if not options.gateway.allow_clock_override:
        raise InvalidInput(
            "X-Lethe-Now is disabled on this deployment (LETHE_ALLOW_CLOCK_OVERRIDE)", field="X-Lethe-Now"
        )
    try:
        given = datetime.fromisoformat(x_lethe_now.replace("Z", "+00:00"))
        if given.tzinfo is None:
            raise InvalidInput("X-Lethe-Now needs a time zone offset", field="X-Lethe-Now")
        given = given.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput("X-Lethe-Now must be an RFC 3339 time", field="X-Lethe-Now") from exc
    # Bounded, so every deadline the memory derives from it (a sleep 24 h on, a note ask pending) stays a
    # time the workflow and Postgres can hold, and a clock set absurdly far ahead cannot stall its lane.
    if not CLOCK_EARLIEST <= given <= now + CLOCK_AHEAD:
        raise InvalidInput(
            f"X-Lethe-Now must fall between {CLOCK_EARLIEST.date()} and {CLOCK_AHEAD.days // 365} years from now",
            field="X-Lethe-Now",
        )
    return Clock(given, overridden=True)


TenantDep = Annotated[str, Depends(_tenant)]
# The tenant from `Authorization: Bearer` or, for Anthropic's SDKs, `x-api-key`.
AnthropicTenantDep = Annotated[str, Depends(_tenant_by_either)]
AdminDep = Annotated[None, Depends(_admin)]
MemoryIdDep = Annotated[str, Depends(_memory_id)]
# The person the memory belongs to (fixed at the first call naming one): whose graph it feeds and recalls.
UserHeader = Annotated[str | None, Header(alias="X-Lethe-User", pattern=MEMORY_ID_PATTERN.pattern, max_length=100)]
# The agent that runs the conversation, fixed at the first call that names one (the profile's `agent:<name>`).
AgentHeader = Annotated[str | None, Header(alias="X-Lethe-Agent", pattern=MEMORY_ID_PATTERN.pattern, max_length=100)]
ClockDep = Annotated[Clock, Depends(_clock)]
