"""Snapshots of the Sessions pane at 100×30 and 160×45: the session list with a transcript that has a
network tool result and the turns it taints, and the empty state.

The state is real and built through the engine before the app starts, as tests/engine/test_forget.py
does: the fixture transcripts are imported with their notes, a fact of each session is flushed, the
Lingyin fact is recalled on three earlier days by three queries (engines whose clock is set to those
days, on the same home and workspace) and Dreaming promotes it into MEMORY.md. ``session_app`` and
``build_state`` are shared with the Forget snapshots and flows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawmem.engine.config import Settings, load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot

from tests.session_fixture import A_FACT, AFTER, B_FACT, CRON, DREAM_AT, HZ, LINGYIN, RECALLS, A, B
from tests.tui.conftest import SNAP_ROOT
from tests.tui.test_snapshots import SIZES, settle


def at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def build_state(settings: Settings, *, promote: bool = True) -> None:
    """Import the three fixture sessions (with notes); with ``promote``, flush a fact of A and B, recall
    B's on three days by three queries (keyword searches, no model) and let Dreaming apply it."""
    with at(settings, AFTER) as e:
        e.sessions.import_file(HZ, note=True)
        e.sessions.import_file(LINGYIN, note=True)
        e.sessions.import_file(CRON)
        if not promote:
            return
        e.sessions.flush(B, B_FACT, date="2026-10-31")
        e.sessions.flush(A, A_FACT, date="2026-10-30")
        e.sync(embed=False)
    for now, query in RECALLS:
        with at(settings, now) as e:
            hits = e.search(query, legs="keyword", sync=False).results
            assert any(h.path == "memory/2026-10-31.md" for h in hits), query
    with at(settings, DREAM_AT) as e:
        run = e.dreaming.run(apply=True)
        assert run.applied is not None and run.applied.applied, run


def fixed_uuids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proposal and run ids are random uuid4s and the Forget plan shows them; the only stand-in is a
    fixed sequence of valid, distinct uuids so the snapshots are the same on every run."""
    counter = itertools.count(1)

    def fake_uuid4() -> uuid.UUID:
        return uuid.UUID(bytes=hashlib.sha1(f"clawmem-sessions-{next(counter)}".encode()).digest()[:16], version=4)

    monkeypatch.setattr(uuid, "uuid4", fake_uuid4)


@pytest.fixture
def session_app(
    request: pytest.FixtureRequest, indexed_templates: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., ClawmemApp]]:
    """Like ``make_app``, with sessions imported (and B's fact promoted) before the app is built."""
    fixed_uuids(monkeypatch)
    engines: list[MemoryEngine] = []
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)

    def make(*, state: str = "promoted") -> ClawmemApp:
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        shutil.copytree(indexed_templates("workspace"), base)
        settings = load_settings(home=base / "home", workspace=base / "workspace")
        if state != "empty":
            build_state(settings, promote=state == "promoted")
        engine = MemoryEngine(settings)
        if state == "promoted":
            engine.sync()  # embed the new notes' chunks, so the plan's vector rows are real
        engines.append(engine)
        return ClawmemApp(engine, watch=False, background_index=False)

    yield make
    for engine in engines:
        engine.close()


async def open_sessions(pilot: Pilot[object], *keys: str) -> None:
    await settle(pilot)
    await pilot.press("8")
    await settle(pilot)
    if keys:
        await pilot.press(*keys)
        await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_sessions_transcript_with_network_result_and_tainted_turns(
    snap_compare, session_app: Callable[..., ClawmemApp], size
) -> None:
    app = session_app()
    detail = app.engine.sessions.show(A)
    assert [(t.seq, t.network, t.tainted) for t in detail.turns if t.network or t.tainted] == [
        (4, True, False),
        (5, False, True),
    ]

    async def run_before(pilot: Pilot[object]) -> None:
        await open_sessions(pilot, "j")  # newest first: the cron digest, then the Hangzhou trip
        assert pilot.app.query_one("#sessions-pane").session_id == A  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_sessions_empty_state_explains_how_to_import(snap_compare, session_app: Callable[..., ClawmemApp]) -> None:
    async def run_before(pilot: Pilot[object]) -> None:
        await open_sessions(pilot)

    assert snap_compare(session_app(state="empty"), terminal_size=(100, 30), run_before=run_before)
