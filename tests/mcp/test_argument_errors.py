"""Arguments no tool can use, through the SDK's client connected to the server in-process (the
client sends what JSON can carry, lone surrogates included, which stdio's parser drops before the
server sees them): each is an error result of one short line, and nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clawmem.mcp_server.server import MAX_ERROR_CHARS

from tests.mcp.conftest import error_text, in_process_client, structured


def snapshot(workspace: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        ("memory_append", {"text": "- seat \ud800"}, "text"),
        ("memory_append", {"text": "- seat", "session": "\udcff"}, "session"),
        ("intent_cancel", {"id": "\ud800abcdef"}, "id"),
        ("forget_preview", {"session": ["ok", "\ud800"]}, "session.1"),
        ("memory_search", {"query": "hotel", "project": ["\ud800"]}, "project.0"),
    ],
)
async def test_an_argument_that_is_not_valid_text_is_refused_and_writes_nothing(
    home: Path, workspace: Path, tool: str, args: dict[str, Any], where: str
) -> None:
    """A lone surrogate reached the engine and failed as an internal error (UTF-8 encoding)."""
    before = snapshot(workspace)
    async with in_process_client(home, workspace) as client:
        text = error_text(await client.call_tool(tool, args))
        assert text == f"{tool}: {where}: not valid Unicode text (a lone surrogate); nothing was done"
        assert snapshot(workspace) == before
        assert structured(await client.call_tool("memory_search", {"query": "hotel"}))["results"]


async def test_an_error_echoing_a_huge_or_multiline_argument_is_one_short_line(home: Path, workspace: Path) -> None:
    """An unknown key with a newline made a two-line error; a huge value was echoed whole."""
    async with in_process_client(home, workspace) as client:
        unknown = error_text(await client.call_tool("forget_preview", {"session": "x", "a\nb": 1}))
        assert "unknown argument" in unknown
        huge = error_text(await client.call_tool("forget_preview", {"session": "x" * 100_000}))
        assert len(huge) <= MAX_ERROR_CHARS and huge.endswith("…")
