"""``supersede_propose``: an agent proposes that an entry is superseded; nothing is written until the
person accepts it with ``clawmem supersede --accept``. A read-only server does not offer it.

The server is built in-process (:func:`build_server` over a :class:`MemoryDoor`) and driven by the
SDK's own client through its in-memory transport: the tools, schemas, annotations and error rules
are the ones ``clawmem mcp`` serves (tests/mcp/test_stdio.py runs the real subprocess)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.server import build_server
from clawmem.program.main import main
from mcp import Client

from tests.conftest import make_settings
from tests.mcp.conftest import error_text, structured


@asynccontextmanager
async def server_client(home: Path, workspace: Path, *, read_only: bool = False) -> AsyncIterator[Client]:
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}))
    door = MemoryDoor(engine, watch=False, embed=False, sync=False)
    try:
        async with Client(build_server(door, read_only=read_only)) as client:
            yield client
    finally:
        door.close()


def files(workspace: Path) -> dict[str, bytes]:
    return {p.relative_to(workspace).as_posix(): p.read_bytes() for p in sorted(workspace.rglob("*")) if p.is_file()}


async def test_propose_then_the_person_accepts_on_the_command_line(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    before = files(workspace)
    async with server_client(home, workspace) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        tool = tools["supersede_propose"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is False and tool.annotations.destructive_hint is False
        assert set(tool.input_schema["properties"]) == {"older", "newer", "reason"}
        assert "Nothing is written" in (tool.description or "")
        data = structured(
            await client.call_tool(
                "supersede_propose",
                {"older": "MEMORY.md#L10", "newer": "memory/2026-11-04.md:4", "reason": "the review moved"},
            )
        )
        proposal = data["proposal"]
        assert (proposal["status"], proposal["olderPath"], proposal["olderLine"]) == ("pending", "MEMORY.md", 10)
        assert (proposal["newerPath"], proposal["newerLine"], proposal["originClass"]) == (
            "memory/2026-11-04.md",
            4,
            "agent",
        )
        again = structured(
            await client.call_tool(
                "supersede_propose", {"older": "MEMORY.md:10", "newer": "memory/2026-11-04.md:4", "reason": "again"}
            )
        )
        assert again["proposal"]["id"] == proposal["id"] and again["proposal"]["duplicate"] is True
    assert files(workspace) == before  # an agent's proposal writes no file

    base = ["--home", str(home), "--workspace", str(workspace)]
    assert main([*base, "supersede", "--proposals", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["proposals"]
    assert [p["id"] for p in listed] == [proposal["id"]]
    assert main([*base, "supersede", "--accept", proposal["shortId"]]) == 0
    capsys.readouterr()
    lines = (workspace / "MEMORY.md").read_text().split("\n")
    assert lines[9] == "<!-- observed: 2026-11-05 | status: superseded | by: memory/2026-11-04.md#4 -->"
    assert lines[10].startswith("- Deploys happen on Tuesdays")


async def test_bad_proposals_are_one_line_errors_and_write_nothing(home: Path, workspace: Path) -> None:
    before = files(workspace)
    async with server_client(home, workspace) as client:
        for args, says in (
            ({"older": "MEMORY.md", "newer": "MEMORY.md:4", "reason": "x"}, "older 'MEMORY.md' is not PATH:LINE"),
            ({"older": "MEMORY.md:1", "newer": "MEMORY.md:4", "reason": "x"}, "is a heading, not a bullet entry"),
            ({"older": "MEMORY.md:4", "newer": "MEMORY.md:4", "reason": "x"}, "cannot supersede itself"),
            ({"older": "../x.md:1", "newer": "MEMORY.md:4", "reason": "x"}, "'..' is refused"),
            ({"older": "MEMORY.md:4", "newer": "MEMORY.md:5", "reason": " "}, "the reason is empty"),
            ({"older": "MEMORY.md:4", "newer": "MEMORY.md:5"}, "reason"),
        ):
            text = error_text(await client.call_tool("supersede_propose", args))
            assert text.startswith("supersede_propose: ") and says in text, text
    assert files(workspace) == before
    with MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"})) as engine:
        assert engine.curation.proposals(None) == []


async def test_a_read_only_server_offers_no_proposal(home: Path, workspace: Path) -> None:
    before = files(workspace)
    async with server_client(home, workspace, read_only=True) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "supersede_propose" not in names and "memory_search" in names
        refused = await client.call_tool(
            "supersede_propose", {"older": "MEMORY.md:10", "newer": "MEMORY.md:12", "reason": "x"}
        )
        assert refused.is_error and "supersede_propose" in refused.content[0].text
    assert files(workspace) == before
