"""`lethe tenant`: create tenants and manage their keys straight in the database (the migration/admin role).

The same operations are on the admin API (`/v1/admin/tenants...`). Keys are printed once; Lethe keeps only
their hash, and lists show only a key's first characters. A revoked key stops working on every gateway within
the key cache time (5 s).
"""

from __future__ import annotations

import argparse
from typing import Any

from config.settings import Settings

__all__ = ["add_tenant_commands", "run_tenant"]


def add_tenant_commands(sub: Any) -> None:
    tenant = sub.add_parser("tenant", help="manage tenants and their API keys")
    tenant_sub = tenant.add_subparsers(dest="tenant_command", required=True)
    create = tenant_sub.add_parser("create", help="create a tenant and print its API key")
    create.add_argument("name")
    issue = tenant_sub.add_parser("key", help="issue another API key for a tenant")
    issue.add_argument("tenant_id")
    keys = tenant_sub.add_parser("keys", help="list a tenant's keys (prefixes only)")
    keys.add_argument("tenant_id")
    revoke = tenant_sub.add_parser("revoke", help="revoke one of a tenant's keys")
    revoke.add_argument("tenant_id")
    revoke.add_argument("key_id", type=int)
    rotate = tenant_sub.add_parser("rotate", help="issue a new key and revoke the old one")
    rotate.add_argument("tenant_id")
    rotate.add_argument("key_id", type=int)
    ceiling = tenant_sub.add_parser(
        "ceiling", help="show, set or clear a tenant's own ceiling for a model (read before the deployment's)")
    ceiling.add_argument("tenant_id")
    ceiling.add_argument("model", nargs="?", help="a model name or family (gpt-4o covers gpt-4o-2024-08-06)")
    ceiling.add_argument("tokens", nargs="?", type=int, help="the ceiling in tokens; without it, shows the table")
    ceiling.add_argument("--clear", action="store_true", help="remove the tenant's ceiling for the model")
    profile = tenant_sub.add_parser(
        "profile", help="show or set which sources of a fact feed the tenant's users' graphs")
    profile.add_argument("tenant_id")
    profile.add_argument("settings", nargs="*", metavar="SOURCE=on|off|default",
                         help="user, assistant, tool, unknown, api, extracted or agent:<name>; without any, shows it")
    from cli import upstream

    upstream.add_parser(tenant_sub)


def _print_issued(issued: Any) -> None:
    print(f"tenant {issued.tenant_name} ({issued.tenant_id})\nkey id: {issued.key_id}\napi key: {issued.api_key}")
    print("The key is shown once; Lethe keeps only its hash.")


async def run_tenant(settings: Settings, database_url: str, args: argparse.Namespace) -> int:
    from service import tenants
    from store.db import Database

    db = Database(database_url, pool_size=1)
    try:
        command = args.tenant_command
        if command == "create":
            _print_issued(await tenants.create_tenant(db, name=args.name))
        elif command == "key":
            _print_issued(await tenants.issue_key(db, tenant_id=args.tenant_id))
        elif command == "keys":
            for key in await tenants.list_keys(db, tenant_id=args.tenant_id):
                state = f"revoked {key.revoked_at.isoformat()}" if key.revoked_at else "live"
                print(f"{key.id}\t{key.prefix}…\tcreated {key.created_at.isoformat()}\t{state}")
        elif command == "ceiling":
            await _ceiling(db, args)
        elif command == "profile":
            await _profile(db, args)
        elif command == "revoke":
            key = await tenants.revoke_key(db, tenant_id=args.tenant_id, key_id=args.key_id)
            print(f"key {key.id} ({key.prefix}…) revoked; gateways refuse it within 5 s")
        else:
            _print_issued(await tenants.rotate_key(db, tenant_id=args.tenant_id, key_id=args.key_id))
            print(f"key {args.key_id} revoked")
    finally:
        await db.dispose()
    return 0


async def _ceiling(db: Any, args: argparse.Namespace) -> None:
    from contracts.errors import InvalidInput
    from service.ceilings import TTL_SECONDS, TenantCeilings

    ceilings = TenantCeilings()
    if args.clear or args.tokens is not None:
        if not args.model:
            raise InvalidInput("name the model whose ceiling to set or clear", field="model")
        if args.clear:
            table = await ceilings.clear(db, args.tenant_id, model=args.model)
        else:
            table = await ceilings.set(db, args.tenant_id, model=args.model, ceiling_tokens=args.tokens)
        print(f"gateways plan by it within {TTL_SECONDS:g} s")
    else:
        table = await ceilings.table(db, args.tenant_id)
    for model, tokens in sorted(table.items()):
        print(f"{model}\t{tokens}")
    if not table:
        print(f"tenant {args.tenant_id} has no ceilings of its own (the deployment's apply)")


PROFILE_VALUES = {"on": True, "off": False, "default": None}


async def _profile(db: Any, args: argparse.Namespace) -> None:
    from contracts.errors import InvalidInput
    from service import users

    if args.settings:
        sources: dict[str, bool | None] = {}
        for setting in args.settings:
            source, _, value = setting.partition("=")
            if value not in PROFILE_VALUES:
                raise InvalidInput(f"{setting}: write SOURCE=on, SOURCE=off or SOURCE=default", field="settings")
            sources[source] = PROFILE_VALUES[value]
        shown = await users.put_profile(db, tenant_id=args.tenant_id, body={"profile": sources})
        print("facts fed from now on follow it; facts already in a graph stay")
    else:
        shown = await users.get_profile(db, tenant_id=args.tenant_id)
    for source, fed in sorted(shown["profile"].items()):
        print(f"{source}\t{'feeds' if fed else 'muted'}")
