"""Waiting for the app to be still under a Pilot: for the tests and `make screenshots`.

"Still" is a condition, not a time: no worker pending or running, no one-shot timer waiting to
fire (the panes debounce typing with ``set_timer``), no message queued for the app or any widget
of the screen stack, and no shown table with rows or cells it has not measured yet. Textual's
DataTable sizes its auto-width columns when it is next idle; a screenshot taken before that shows
every column at its label's width ("supers…"). (A table painted before it measured kept those
widths even after measuring, in the app too: MeasuredTable repaints it.)

``settle`` returns as soon as the app has been still for two rounds of Pilot's own ``pause()``
(which waits until every widget has processed the events queued so far); it never sleeps a fixed
time. Past its bound it fails, naming what it was still waiting for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

from textual.app import App
from textual.dom import DOMNode
from textual.message_pump import MessagePump
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual.widgets._toast import Toast
from textual.worker import WorkerState

TIMEOUT_S = 30.0  # generous: a loaded CI runner with both cores busy, never a fixed wait
_POLL_S = 0.01  # between checks while a thread worker runs (the UI loop itself is idle then)
_STILL_ROUNDS = 2  # consecutive still checks: a callback run in the first may queue more work


class NotStill(AssertionError):
    """The app did not become still within the bound; the message says what kept it busy."""


def _nodes(app: App[object]) -> Iterator[MessagePump]:
    yield app
    for screen in app.screen_stack:
        yield from screen.walk_children(with_self=True)


def _pending_timer(node: MessagePump) -> str | None:
    """A one-shot timer of ``node`` that has not fired yet. Not work: intervals (they repeat
    forever), a notification's lifetime (waiting for it would hide the toast a test looks for) and
    the tooltip's hover delay."""
    if isinstance(node, Toast):
        return None
    for timer in list(node._timers):
        task = timer._task
        if timer.name == "tooltip-timer":
            continue
        if timer._repeat == 0 and task is not None and not task.done() and timer._active.is_set():
            return timer.name
    return None


def busy(app: App[object]) -> str | None:
    """What still changes what is drawn, in words; None when the app is still."""
    for worker in app.workers:
        if worker.state in (WorkerState.PENDING, WorkerState.RUNNING):
            return f"worker {worker.name!r} ({worker.state.name.lower()})"
    for node in _nodes(app):
        name = _pending_timer(node)
        if name is not None:
            return f"timer {name!r} of {_label(node)}"
        queued: int = node._message_queue.qsize()
        if queued:
            return f"{queued} message(s) queued for {_label(node)}"
    for table in app.screen.query(DataTable):
        shown = table.display and table.region.area > 0
        # Textual keeps no public flag for "measured": these are the ones its idle handler clears.
        if shown and (table._require_update_dimensions or table._updated_cells):
            return f"table {_label(table)} not measured yet"
    return None


def _label(node: MessagePump) -> str:
    if isinstance(node, DOMNode) and node.id:
        return f"#{node.id}"
    return type(node).__name__


async def settle(pilot: Pilot[object], *, timeout: float = TIMEOUT_S) -> None:
    """Return when the app is still (see the module docstring); fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    still = 0
    while True:
        await pilot.pause()
        reason = busy(pilot.app)
        if reason is None:
            still += 1
            if still >= _STILL_ROUNDS:
                return
            continue
        still = 0
        if time.monotonic() > deadline:
            raise NotStill(f"the app was not still after {timeout:.0f} s: {reason}")
        await asyncio.sleep(_POLL_S)
