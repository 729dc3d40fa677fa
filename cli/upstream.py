"""`lethe tenant upstream`: set, show or clear the provider the proxy calls for a tenant.

The key is read from standard input, never from the command line, where `ps` and shell history would keep it.
"""

from __future__ import annotations

import argparse
import sys

from config.settings import Settings

__all__ = ["add_parser", "run"]


def add_parser(tenant_commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    upstream = tenant_commands.add_parser("upstream", help="set, show or clear a tenant's upstream for the proxy")
    upstream.add_argument("tenant", help="the tenant's id (t_...) or name")
    upstream.add_argument("--base-url", help="the OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
    upstream.add_argument("--api-key-stdin", action="store_true", help="read the upstream's API key from stdin")
    upstream.add_argument("--clear", action="store_true", help="remove the tenant's upstream")


async def run(settings: Settings, args: argparse.Namespace) -> int:
    from contracts.errors import InvalidInput, NotFound
    from store.db import Database
    from store.repositories import tenants, upstreams
    from store.secrets import SecretBox

    if not settings.database.url:
        raise SystemExit("LETHE_DATABASE_URL is not set (lethe dev sets it for its embedded Postgres)")
    if args.base_url and not args.base_url.startswith(("http://", "https://")):
        raise InvalidInput("--base-url must be an http(s) URL", field="base_url")
    api_key = sys.stdin.readline().strip() if args.api_key_stdin else None
    db = Database(settings.database.url, pool_size=1)
    try:
        async with db.session() as session, session.begin():
            tenant = (await tenants.get_tenant_by_name(session, name=args.tenant)
                      if not args.tenant.startswith("t_") else None)
            tenant_id = tenant.id if tenant else args.tenant
            if args.clear:
                cleared = await upstreams.clear_upstream(session, tenant_id=tenant_id)
                print(f"upstream of {tenant_id} cleared" if cleared else f"{tenant_id} had no upstream")
                return 0
            if args.base_url:
                stored = await upstreams.set_upstream(
                    session, tenant_id=tenant_id, base_url=args.base_url.rstrip("/"), api_key=api_key or None,
                    box=SecretBox(settings.gateway.secret_key.get_secret_value()))
            else:
                found = await upstreams.get_upstream(session, tenant_id=tenant_id, box=None)
                if found is None:
                    raise NotFound(f"no upstream set for tenant {tenant_id!r}")
                stored = found
    finally:
        await db.dispose()
    print(f"tenant {tenant_id}: upstream {stored.base_url}, key {stored.api_key_hint or '(none)'}")
    return 0
