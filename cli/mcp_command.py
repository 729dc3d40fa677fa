"""`lethe mcp`: serve cli/mcp_server.py's tools over stdio (LETHE_URL, LETHE_KEY) or streamable HTTP."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

__all__ = ["add_mcp_command", "run_mcp"]


def add_mcp_command(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="serve a memory's facts to MCP clients (coding agents, desktop assistants)",
                         description="An MCP server over the gateway at LETHE_URL: over stdio with the API key "
                                     "LETHE_KEY, over streamable HTTP (at /mcp) with each request's own "
                                     "Authorization: Bearer <key>.")
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --transport http: the address to listen on")
    mcp.add_argument("--port", type=int, default=8765, help="with --transport http: the port to listen on")


def run_mcp(args: argparse.Namespace) -> int:
    url = os.environ.get("LETHE_URL", "").strip()
    key = os.environ.get("LETHE_KEY", "").strip()
    if not url:
        print("lethe mcp: LETHE_URL is not set (the gateway's address, e.g. http://localhost:8080)",
              file=sys.stderr)
        return 2
    if args.transport == "stdio" and not key:
        print("lethe mcp: LETHE_KEY is not set (the tenant's API key; over HTTP each request sends its own)",
              file=sys.stderr)
        return 2
    return asyncio.run(_stdio(url, key) if args.transport == "stdio" else _http(url, args.host, args.port))


async def _stdio(url: str, key: str) -> int:
    import httpx

    from cli.mcp_server import build_server

    async with httpx.AsyncClient(base_url=url.rstrip("/"), timeout=60.0) as http:
        await build_server(http, lambda _ctx: key).run_stdio_async()
    return 0


async def _http(url: str, host: str, port: int) -> int:
    import httpx
    import uvicorn

    from cli.mcp_server import BearerGate, bearer_key, build_server

    def request_key(ctx: Any) -> str:
        # The HTTP request this tool call came in; BearerGate let it through only with a key.
        return bearer_key(ctx.request_context.request.headers.get("authorization")) or ""

    async with httpx.AsyncClient(base_url=url.rstrip("/"), timeout=60.0) as http:
        # Stateless: every request stands alone with its own key, so no session outlives the key that opened it.
        app = build_server(http, request_key).streamable_http_app(stateless_http=True, json_response=True,
                                                                  host=host)
        print(f"lethe mcp: streamable HTTP on http://{host}:{port}/mcp, calling the gateway at {url}",
              file=sys.stderr)
        await uvicorn.Server(uvicorn.Config(BearerGate(app), host=host, port=port, log_level="warning")).serve()
    return 0
