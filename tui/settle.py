"""Waiting for the app to be still under a Pilot: for snapshot tests and `make screenshots`.

"Still" means no worker pending or running, and no shown table with rows or cells it has not
measured yet. Textual's DataTable sizes its auto-width columns when it is next idle; a screenshot
taken before that shows every column at its label's width ("supers…"). (A table painted before it
measured kept those widths even after measuring, in the app too: MeasuredTable repaints it.)
"""

from __future__ import annotations

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.worker import WorkerState

_STEP = 0.05
_MAX_STEPS = 400  # 20 s: past that, shoot what is there (the snapshot then shows what hung)


def busy(app: App[object]) -> bool:
    """Whether a worker or a shown table still has work that changes what is drawn."""
    if any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
        return True
    for table in app.screen.query(DataTable):
        shown = table.display and table.region.area > 0
        # Textual keeps no public flag for "measured": these are the ones its idle handler clears.
        if shown and (table._require_update_dimensions or table._updated_cells):
            return True
    return False


async def settle(pilot: Pilot[object], seconds: float = 0.6) -> None:
    """Pause ``seconds``, then until the app is still, then a last 0.2 s for the final paint."""
    await pilot.pause(seconds)
    for _ in range(_MAX_STEPS):
        if not busy(pilot.app):
            break
        await pilot.pause(_STEP)
    await pilot.pause(0.2)
