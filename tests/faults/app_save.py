"""The app's editor save as one command, for the fault harness: the real Textual app (under
Pilot, in this process) opens MEMORY.md from the Memory pane, edits it in the Editor pane (one
line appended at the end), saves with F2 as a person would, and waits until the save is
re-indexed (a keyword search finds the new line in MEMORY.md). tests/faults/inject.py runs this
instead of the CLI when ``$CLAWMEM_FAULT_ENTRY`` names it, and kills it before its N-th write.
A save the app refuses (a full disk, a read-only folder) shows the person an error
notification: this prints it as the one line on stderr and exits 1, as the CLI would.

Usage (through inject.py): main(["--home", HOME, "--workspace", WS])
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from clawmem.engine.config import load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from clawmem.tui.panes.memory import MemoryPane
from textual.pilot import Pilot
from textual.widgets import TextArea

from tests.tui.waits import settle, wait_for

LINE = "- The staging database moved to the new cluster in November."
NEEDLE = "cluster"


def _errors(app: ClawmemApp) -> list[str]:
    """The error notifications the app has shown (what a person reads when a save fails)."""
    return [f"{n.title}: {n.message}" for n in app._notifications if n.severity == "error"]


async def open_memory_in_editor(app: ClawmemApp, pilot: Pilot[object]) -> TextArea:
    """MEMORY.md opened from the Memory pane into the Editor pane, as a person does (1, then e),
    once the editor holds what is on disk (read at each poll: other writers may change it meanwhile)."""
    await pilot.press("1")
    memory = app.query_one(MemoryPane)
    memory.open("MEMORY.md", None)
    await wait_for(pilot, lambda: memory.current == "MEMORY.md", timeout=30)
    await pilot.press("e")

    def shows_the_disk() -> bool:
        found = app.screen.query("#editor-area")
        on_disk = (app.engine.workspace / "MEMORY.md").read_text(encoding="utf-8")
        return bool(found) and found.first(TextArea).text == on_disk

    await wait_for(pilot, shows_the_disk, timeout=30)
    return app.query_one("#editor-area", TextArea)


async def _edit_and_save(app: ClawmemApp) -> list[str]:
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        editor = await open_memory_in_editor(app, pilot)
        editor.insert(LINE + "\n", location=editor.document.end)
        await pilot.press("f2")

        def indexed() -> bool:
            hits = app.engine.search(NEEDLE, legs="keyword", record=False, sync=False).results
            return any(h.path == "MEMORY.md" and NEEDLE in h.snippet for h in hits)

        await wait_for(pilot, lambda: indexed() or bool(_errors(app)), timeout=60)
        await settle(pilot)
        return _errors(app)


def main(argv: list[str]) -> int:
    args = dict(zip(argv[::2], argv[1::2], strict=True))
    settings = load_settings(home=Path(args["--home"]), workspace=Path(args["--workspace"]))
    with MemoryEngine(settings) as engine:
        errors = asyncio.run(_edit_and_save(ClawmemApp(engine, watch=False, background_index=False)))
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0
