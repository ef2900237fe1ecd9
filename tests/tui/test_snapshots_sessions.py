"""Snapshots of the Sessions pane at 100×30 and 160×45: the session list with a transcript that has a
network tool result and the turns it taints, and the empty state.

The state is real and built through the engine before the app starts, as tests/engine/test_forget.py
does: the fixture transcripts are imported with their notes, a fact of each session is flushed, the
Lingyin fact is recalled on three earlier days by three queries (engines whose clock is set to those
days, on the same home and workspace) and Dreaming promotes it into MEMORY.md. ``session_app`` and
``build_state`` are shared with the Forget snapshots and flows.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot

from tests.session_fixture import A
from tests.tui.states import SIZES
from tests.tui.waits import settle


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
