"""The app on a machine whose index is shared through PostgreSQL (issue 39): the real Textual app
driven by Pilot, a real server (tests/postgres/conftest.py); keyword-only, what is shared is the index."""

from __future__ import annotations

import io
from pathlib import Path

from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from clawmem.tui.panes.search import SearchPane
from rich.console import Console
from textual.widgets import Static

from tests.conftest import make_settings
from tests.tui.waits import settle, wait_for


async def test_the_app_publishes_searches_the_shared_index_and_says_so(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = {"url": pg_url, "schema": pg_schema}
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}, store=store))
    app = ClawmemApp(engine, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert await wait_for(pilot, lambda: not app.indexing, timeout=30)  # its index, published
        pane = app.query_one(SearchPane)
        pane.search_for("billing migration")
        assert await wait_for(pilot, lambda: pane.response is not None, timeout=20)
        assert pane.response is not None and pane.response.results
        assert pane.response.keyword_ranking == "PostgreSQL ts_rank_cd"  # read from the shared index
        assert f"⇄ shared index {engine.shared_index}" in str(app.status_bar.render())
        assert engine.shared_index is not None and f"schema {pg_schema}" in engine.shared_index
        await pilot.press("4")  # the Status pane
        await settle(pilot)

        def status_text() -> str:
            console = Console(width=220, file=io.StringIO(), record=True)
            console.print(app.query_one("#status-lines", Static).content)
            return console.export_text()

        assert await wait_for(pilot, lambda: "Shared index" in status_text(), timeout=20)
        assert f"schema {pg_schema} · revision" in status_text()
    # another machine without the files finds what this one published
    laptop = MemoryEngine(
        make_settings(tmp_path / "laptop", tmp_path / "none", embedding={"provider": "none"}, store=store)
    )
    assert any("billing" in h.snippet for h in laptop.search("billing migration", record=False).results)
    laptop.close()
