"""Waiting on a condition, never on the clock: the app still (``settle``), or a named condition.

``settle`` is the app's own (clawmem.tui.settle, also used by `make screenshots`): no worker,
pending timer, queued message or unmeasured table. ``wait_for`` polls a condition the test names —
a file the watcher must see, a background pass that must end — and fails with that condition's
source when the bound passes, so a timeout says what it waited for.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable

from clawmem.tui.settle import settle
from textual.pilot import Pilot

__all__ = ["settle", "wait_for"]

_POLL_S = 0.02


def _described(condition: Callable[[], bool]) -> str:
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return repr(condition)


async def wait_for(
    pilot: Pilot[object],
    condition: Callable[[], bool],
    timeout: float = 10.0,
    *,
    diagnosis: Callable[[], str] | None = None,
) -> bool:
    """Return True once ``condition()`` holds; past ``timeout`` seconds fail, naming the condition
    (and adding ``diagnosis()``, what the test knows about where it got stuck)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            why = f"; {diagnosis()}" if diagnosis is not None else ""
            raise AssertionError(f"waited {timeout:g} s for: {_described(condition)}{why}")
        await pilot.pause(_POLL_S)
    return True
