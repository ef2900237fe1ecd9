"""``clawmem mcp``: serve the memory to agents over the Model Context Protocol (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import sys

from clawmem.engine.errors import ClawmemError
from clawmem.shell import flags, values

DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[flags.global_parent()],
        help="serve memory_search, memory_get, memory_append … to agents over MCP (stdio by default)",
        description="Serve this agent's memory over the Model Context Protocol: memory_search, memory_get, "
        "memory_append, intent_create/list/match/cancel, context_startup, forget_preview. One engine for the "
        "server's lifetime; the index is kept in sync with the files.",
    )
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", metavar="HOST", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=values.whole_number("--port", 1, 65535),
        default=DEFAULT_PORT,
        metavar="N",
        help=f"HTTP port (default {DEFAULT_PORT})",
    )
    p.add_argument(
        "--token",
        metavar="TOKEN",
        help="HTTP bearer token (or $CLAWMEM_MCP_TOKEN); required on a non-loopback --host",
    )
    p.add_argument("--read-only", action="store_true", help="list only the tools that write nothing")
    p.add_argument(
        "--append-origin",
        type=values.one_of("--append-origin", ("agent", "untrusted")),
        default="agent",
        metavar="{agent,untrusted}",
        help="the trust class of everything this server appends (default agent; callers can only lower it)",
    )
    p.add_argument("--no-watch", action="store_true", help=argparse.SUPPRESS)
    # Benchmarks on a synthetic index (chunks without files): never sync it with the (empty) workspace.
    p.add_argument("--no-sync", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from clawmem.mcp_server import auth

    token = None
    if args.http:
        token, source = auth.resolve_token(args.token)
        auth.check_bind(args.host, token)
    elif args.token is not None:
        raise ClawmemError("--token only applies to --http")
    engine = flags.engine_from(args)
    engine.require_memory_to_read()
    from clawmem.mcp_server.door import MemoryDoor
    from clawmem.mcp_server.server import build_server, run_http, run_stdio

    door = MemoryDoor(engine, watch=not (args.no_watch or args.no_sync), sync=not args.no_sync)
    server = build_server(door, read_only=args.read_only, append_origin=args.append_origin)
    door.start()  # after the imports: loading the model beside them would slow the handshake on 2 cores
    try:
        if args.http:
            shown = f"[{args.host}]" if ":" in args.host else args.host
            print(
                f"clawmem: serving MCP on http://{shown}:{args.port}/mcp "
                f"({'read-only, ' if args.read_only else ''}token: {source})",
                file=sys.stderr,
                flush=True,
            )
            run_http(server, host=args.host, port=args.port, token=token)
        else:
            run_stdio(server)
    finally:
        door.close()
    return 0
