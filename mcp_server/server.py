"""Build and run the MCP server: one :class:`MemoryDoor` (one engine), the tools, stdio or HTTP.

Errors reach the agent as a tool error with one line: a bad argument names the argument (the
SDK's validation message is reduced to its first error, an unknown argument is refused instead of
being ignored), an engine refusal keeps the engine's sentence, and anything unexpected is logged
under ``<home>/logs/clawmem.log`` and answered with one line, never a traceback.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

import anyio
import apsw
from clawmem.engine.errors import ClawmemError
from clawmem.engine.text_clip import clip
from clawmem.mcp_server.auth import BearerTokenMiddleware
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.tools import GetOut, MemoryGetArgs, Tools, one_line, tool_specs
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

log = logging.getLogger("clawmem.mcp")

MAX_ERROR_CHARS = 500  # a tool error's length at most

INSTRUCTIONS = (
    "clawmem is this agent's long-term memory (OpenClaw Memory Core: Markdown files are the truth). "
    "Before answering from memory, call memory_search with the question; cite results as path#Lx-Ly and read "
    "more with memory_get. Remember durable facts with memory_append (today's diary; the person curates "
    "MEMORY.md). Mark text from web pages or other people webSourced/untrusted."
)

PROPOSE_NOTE = (
    " When a fact changed (a newer entry replaces an older one), propose marking the older one superseded with "
    "supersede_propose; the person accepts or rejects it."
)


def _validation_line(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid arguments"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if not str(p).startswith("function-")) or "arguments"
    where = where.removeprefix("field_")
    got = first.get("input")
    shown = f" (got {got!r})" if first.get("type") != "missing" and not isinstance(got, dict) else ""
    if len(shown) > 60:
        shown = shown[:57] + "…)"
    more = f"; {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''}" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{shown}{more}"


def not_text(value: Any, where: str = "") -> str | None:
    """The first argument (``project.0``) holding a string that is not valid Unicode (a lone
    surrogate, which JSON can carry): no file, index or log could store it. None when all are."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where or "arguments"
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = not_text(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


class ClawmemMCPServer(MCPServer):
    """The SDK's MCPServer with clawmem's error rules (see the module docstring)."""

    def __init__(self, *args: Any, log_path: Path | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._log_path = log_path

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await self._call_tool(name, arguments, context)
        except ToolError as exc:  # one line, and short: an argument or key echoed back may be huge or hold newlines
            raise ToolError(clip(str(exc), MAX_ERROR_CHARS, flat=True)) from None

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            known = set((tool.parameters or {}).get("properties", {}))
            unknown = sorted(set(arguments) - known)
            if unknown:
                raise ToolError(
                    f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                    f"(arguments: {', '.join(sorted(known))}); nothing was done"
                )
            where = not_text(arguments)
            if where is not None:
                raise ToolError(f"{name}: {where}: not valid Unicode text (a lone surrogate); nothing was done")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: {_validation_line(cause)}; nothing was done") from None
            if isinstance(cause, ToolError):
                raise ToolError(f"{name}: {one_line(str(cause))}") from None
            if isinstance(cause, (ClawmemError,)):
                raise ToolError(f"{name}: {one_line(str(cause))}") from None
            if isinstance(cause, apsw.BusyError):
                raise ToolError(f"{name}: the database is locked by another clawmem process; try again") from None
            if cause is not None:
                where = self._log(cause)
                raise ToolError(f"{name}: internal error: {type(cause).__name__}: {cause} ({where})") from None
            raise ToolError(f"{name}: {one_line(str(exc))}") from None

    def _log(self, exc: BaseException) -> str:
        if self._log_path is None:
            return "no log"
        try:
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            with self._log_path.open("a", encoding="utf-8") as fh:
                traceback.print_exception(exc, file=fh)
            return f"details in {self._log_path}"
        except OSError:
            return "no log could be written"


def _call_get(tools: Tools) -> Any:
    def memory_get(**kw: Any) -> CallToolResult:
        return tools.memory_get(kw["path"], kw["from"], kw["lines"])

    return memory_get


def build_server(door: MemoryDoor, *, read_only: bool = False, append_origin: str = "agent") -> ClawmemMCPServer:
    tools = Tools(door, read_only=read_only, append_origin=append_origin)
    registered: list[Tool] = []
    for name, fn, description, notes in tool_specs(tools):
        if name == "memory_get":
            registered.append(
                Tool(
                    fn=_call_get(tools),
                    name=name,
                    title=notes.title,
                    description=description,
                    parameters=MemoryGetArgs.model_json_schema(by_alias=True),
                    fn_metadata=FuncMetadata(arg_model=MemoryGetArgs, output_model=GetOut),
                    is_async=False,
                    context_kwarg=None,
                    annotations=notes,
                )
            )
            continue
        registered.append(
            Tool.from_function(fn, name=name, title=notes.title, description=description, annotations=notes)
        )
    from importlib.metadata import version

    settings = door.engine.settings
    return ClawmemMCPServer(
        "clawmem",
        title="clawmem memory",
        version=version("clawmem"),
        instructions=INSTRUCTIONS + (" This server is read-only." if read_only else PROPOSE_NOTE),
        tools=registered,
        log_level="WARNING",
        log_path=settings.home / "logs" / "clawmem.log",
    )


def run_stdio(server: MCPServer) -> None:
    anyio.run(server.run_stdio_async)


def run_http(server: MCPServer, *, host: str, port: int, token: str | None, path: str = "/mcp") -> None:
    import uvicorn

    app: Any = server.streamable_http_app(streamable_http_path=path, host=host)
    if token is not None:
        app = BearerTokenMiddleware(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    uvicorn.Server(config).run()


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
