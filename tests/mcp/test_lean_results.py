"""What the model reads from ``memory_search``: lean hits, the data once (the text block is the
structured content's JSON mirror), and a ``maxChars`` budget honoured to the character."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clawmem.engine.facade import MemoryEngine
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.server import build_server
from mcp import Client

from tests.conftest import make_settings
from tests.mcp.conftest import error_text, in_process_client, structured

LABEL = len("structuredContent:\n")  # what OpenClaw puts before the structured block it shows its model
MANY = {"query": "hotel budget trip 杭州", "maxResults": 12, "minScore": 0}


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


async def test_the_text_block_mirrors_the_lean_structured_content(home: Path, workspace: Path) -> None:
    async with in_process_client(home, workspace, read_only=True) as client:
        r = await client.call_tool("memory_search", MANY)
        data = structured(r)
        assert len(data["results"]) >= 4
        # the one text block is JSON.stringify(structuredContent, null, 2): a host shows it once
        assert text_of(r) == json.dumps(data, ensure_ascii=False, indent=2)
        for hit in data["results"]:
            assert set(hit) <= {"citation", "score", "snippet", "originClass", "why", "supersededBy"}
            assert len(hit["snippet"]) <= 240 and hit["why"] and "#L" in hit["citation"]
        explained = structured(await client.call_tool("memory_search", {**MANY, "explain": True}))
        assert [h["citation"] for h in explained["results"]] == [h["citation"] for h in data["results"]]
        assert "breakdown" in explained["results"][0] and "breakdown" not in data["results"][0]
        got = await client.call_tool("memory_get", {"path": "MEMORY.md", "lines": 2})
        assert json.loads(text_of(got)) == structured(got)


async def test_max_chars_is_honoured_to_the_character(home: Path, workspace: Path) -> None:
    """Every budget from the floor up: the text (with a host's label) fits, the hits shown are the
    top of the full list, the last one may be cut, and omitted counts the rest."""
    async with in_process_client(home, workspace, read_only=True) as client:
        full = structured(await client.call_tool("memory_search", MANY))
        whole = len(json.dumps(full, ensure_ascii=False, indent=2)) + LABEL
        seen_cut = seen_omitted = False
        for budget in [*range(200, whole + 40, 37), whole]:
            r = await client.call_tool("memory_search", {**MANY, "maxChars": budget})
            data = structured(r)
            assert len(text_of(r)) + LABEL <= budget, budget
            shown = data["results"]
            assert len(shown) + data.get("omitted", 0) == len(full["results"]), budget
            for got, want in zip(shown, full["results"], strict=False):
                assert got["citation"] == want["citation"]
                if got["snippet"] != want["snippet"]:
                    assert got is shown[-1] and got["snippet"].endswith("…")
                    assert want["snippet"].startswith(got["snippet"][:-1].rstrip())
                    seen_cut = True
            seen_omitted |= data.get("omitted", 0) > 0
            if budget >= whole:
                assert data == full
        assert seen_cut and seen_omitted


async def test_max_chars_under_the_floor_is_one_line_and_explain_fits_too(home: Path, workspace: Path) -> None:
    async with in_process_client(home, workspace, read_only=True) as client:
        text = error_text(await client.call_tool("memory_search", {"query": "hotel", "maxChars": 50}))
        assert text.startswith("memory_search: maxChars must be between 200 and")
        full = structured(await client.call_tool("memory_search", MANY))
        explained = await client.call_tool("memory_search", {**MANY, "explain": True, "maxChars": 4000})
        data = structured(explained)
        assert len(text_of(explained)) + LABEL <= 4000 and data["results"] and data["omitted"]
        assert len(data["results"]) + data["omitted"] == len(full["results"])


async def test_a_search_while_the_model_loads_answers_with_keywords_and_says_so(
    indexed_engine: MemoryEngine, home: Path, workspace: Path
) -> None:
    """A host calls at once: the first answer must not wait for the model (about a second on 2 cores).
    A second engine on the embedded index, its door not started, so the model is never loaded in
    the background; once it is marked ready, the search loads it for its vector leg (the real model)."""
    engine = MemoryEngine(make_settings(home, workspace))
    door = MemoryDoor(engine, watch=False)
    try:
        async with Client(build_server(door, read_only=True)) as client:
            early = structured(await client.call_tool("memory_search", {"query": "为什么没订湖景房"}))
            assert early["note"].startswith("keyword results only: the embedding model is still loading")
            assert early["results"] and "vector" not in early["results"][0]["why"]
            assert not engine.provider_loaded  # the answer did not wait for it
            door.model_ready.set()
            later = structured(await client.call_tool("memory_search", {"query": "为什么没订湖景房"}))
            assert "note" not in later and engine.provider_loaded  # hybrid over every chunk
            assert "vector" in later["results"][0]["why"]
    finally:
        door.close()


def test_the_door_builds_a_complete_index_in_the_background(
    home: Path, workspace: Path, default_model_path: Path
) -> None:
    """A server started on a workspace with no index: its worker syncs the text, then embeds
    every chunk and every line (the pass's progress goes nowhere, whatever it carries)."""
    import time

    engine = MemoryEngine(make_settings(home, workspace))
    door = MemoryDoor(engine, watch=False)
    door.start()
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            embedded, total = engine.vector_coverage()
            if door.ready.is_set() and total and embedded == total and engine.status().line_vectors_waiting == 0:
                break
            time.sleep(0.2)
        embedded, total = engine.vector_coverage()
        assert total and embedded == total, (embedded, total, door.last_error)
        assert door.last_error is None
    finally:
        door.close()
