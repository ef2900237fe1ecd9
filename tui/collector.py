"""When Python's cyclic garbage collector may stop the app's event loop (issue 41).

Python collects cycles in three generations. The young ones (0 and 1) hold what was made since
the last collections and take a few milliseconds. A full collection (generation 2) walks every
tracked object not frozen: 47–132 ms while an index pass loads both cores and a real
workspace's panes are filled — a stall a person feels (bench/RESULTS.md §3). CPython starts one
whenever a young collection finds a quarter more long-lived objects than the last full one left:
during an index pass, every few seconds, at whatever moment — mid-keystroke,
mid-render, beside a search worker that holds Python's lock half the time.

So the app takes full collections over (``IdleCollector``): CPython's automatic ones are put out
of reach (generation 2's threshold), and the app applies CPython's own rule itself, but runs the
collection only when nobody is using the app — no key, click or scroll for ``IDLE_S`` and no pane
worker running — or, so cyclic garbage stays bounded, once a collection has been due for
``MAX_WAIT_S`` whatever is happening. Young collections stay CPython's.

Only on CPython 3.11–3.13, whose full collections stop the world. From 3.14 CPython's collector
is incremental — it scans the old objects a slice at a time and ignores generation 2's threshold
(Python 3.14's "What's New", gc) — so there the app leaves it as it is.

Before it takes over, the app freezes what start-up and the panes' first fill made
(``gc.freeze``, tui/app.py), so that no full collection walks those objects at all.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable

IDLE_S = 0.5  # no use this long: a person has stopped typing (keys come 0.1–0.3 s apart)
MAX_WAIT_S = 30.0  # a due collection waits for idleness at most this long
FULL_AFTER = 10  # young (generation 1) collections between full ones: CPython's default threshold
GROWTH = 0.25  # CPython's rule: a full collection once long-lived objects grew by a quarter
OUT_OF_REACH = 1 << 30  # generation 2's threshold while the app decides (never reached)
TAKES_OVER = sys.implementation.name == "cpython" and sys.version_info < (3, 14)  # see the module docstring


class IdleCollector:
    """Runs the app's full cyclic collections at idle moments (see the module docstring).

    ``idle`` says whether nobody is using the app now; ``clock`` is monotonic seconds (a test
    passes its own). ``tick`` is called on the app's thread a few times a second."""

    def __init__(self, idle: Callable[[], bool], clock: Callable[[], float] = time.monotonic) -> None:
        self._idle = idle
        self._clock = clock
        self._saved: tuple[int, int, int] | None = None
        self._left = 0  # long-lived objects the last full collection left
        self._due_since: float | None = None
        self._checked: tuple[int, bool] = (-1, False)  # (young collections counted, due then)
        self.collections = 0  # full collections this collector ran
        self.forced = 0  # … of them run because one had waited MAX_WAIT_S

    @property
    def active(self) -> bool:
        return self._saved is not None

    def start(self) -> None:
        """Take full collections over (after a collection of its own, so the rule starts from
        what is live now). Nothing where CPython's own collector is incremental (TAKES_OVER)."""
        if not TAKES_OVER:
            return
        if self._saved is None:
            self._saved = gc.get_threshold()
            young, middle, _ = self._saved
            gc.set_threshold(young, middle, OUT_OF_REACH)
        self._collect()

    def stop(self) -> None:
        """Give full collections back to CPython, with its thresholds as they were."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def due(self) -> bool:
        """CPython's own rule for a full collection: enough young collections since the last one,
        and a quarter more long-lived objects than it left."""
        young = gc.get_count()[2]
        if young < FULL_AFTER:
            return False
        if young != self._checked[0]:  # counting generation 2 costs ~1 ms: once per young collection
            grown = len(gc.get_objects(generation=2)) - self._left >= max(self._left, 1) * GROWTH
            self._checked = (young, grown)
        return self._checked[1]

    def tick(self) -> bool:
        """Run a full collection if one is due and nobody is using the app (or it has waited
        MAX_WAIT_S). True when one ran."""
        if self._saved is None or not gc.isenabled():
            return False
        if not self.due():
            self._due_since = None
            return False
        now = self._clock()
        if self._due_since is None:
            self._due_since = now
        idle = self._idle()
        if not idle and now - self._due_since < MAX_WAIT_S:
            return False
        self.forced += int(not idle)
        self._collect()
        return True

    def _collect(self) -> None:
        gc.collect()
        self._left = len(gc.get_objects(generation=2))
        self._checked = (-1, False)
        self._due_since = None
        self.collections += 1
