"""When Python's cyclic garbage collector may stop the app's event loop (issue 41).

Python collects cycles in three generations. The young ones (0 and 1) hold what was made since
the last collections and take a few milliseconds. A full collection (generation 2) walks every
tracked object not frozen: 47–132 ms while an index pass loads both cores and a real
workspace's panes are filled — a stall a person feels (bench/RESULTS.md §3). CPython starts one
whenever a young collection finds a quarter more long-lived objects than the last full one left:
during an index pass, every few seconds, at whatever moment — mid-keystroke,
mid-render, beside a search worker that holds Python's lock half the time.

So the app takes full collections over (``IdleCollector``): CPython's automatic ones are put out
of reach (generation 2's threshold) and the app runs them itself, only when nobody is using the
app — no key, click or scroll for ``IDLE_S`` and no pane worker running — or, so cyclic garbage
stays bounded, once a collection has been due for ``MAX_WAIT_S`` whatever is happening. Young
collections stay CPython's.

And what a full collection leaves is frozen (``gc.freeze``), so that the next one walks only the
objects made since, not every long-lived object again. CPython's quarter's-growth rule is there
so that full collections do not re-walk the long-lived objects too often (its reasoning is
quoted in bench/RESULTS.md §3); with them frozen there is nothing to re-walk, so a collection is
due after CPython's ``FULL_AFTER`` young ones, and takes a few milliseconds instead of 47–132
(bench/RESULTS.md §3). What freezing gives up: an object frozen while alive and later left in a
cycle is garbage no collection sees. So the app sweeps — unfreezes everything, collects, freezes
again — by CPython's own rule one level up: once the frozen objects grew by a quarter over what
the last sweep left (``GROWTH``). Objects that die by their reference count leave the frozen
ones as they die, so a workspace whose panes hold about as much as before seldom needs one.

A sweep walks everything again (158–274 ms on a real workspace, bench/RESULTS.md §3): longer than
a stall a person should feel, and it is never urgent — what it frees is garbage the app already
held. So it waits for a longer quiet than a collection: ``SWEEP_QUIET_S`` without use, a person
reading or away rather than between two keys or two searches. Only a sweep due for
``SWEEP_MAX_WAIT_S`` (someone at the app without such a pause for that long) takes the next
ordinary pause, so the frozen garbage stays bounded.

Only on CPython 3.11–3.13, whose full collections stop the world. From 3.14 CPython's collector
is incremental — it scans the old objects a slice at a time and ignores generation 2's threshold
(Python 3.14's "What's New", gc) — so there the app leaves it as it is.

The app itself freezes what start-up and the panes' first fill made (``IdleCollector.freeze``,
tui/app.py): the counts the sweep rule grows from.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable

IDLE_S = 0.5  # no use this long: a person has stopped typing (keys come 0.1–0.3 s apart)
MAX_WAIT_S = 30.0  # a due collection waits for idleness at most this long
FULL_AFTER = 10  # young (generation 1) collections between full ones: CPython's default threshold
GROWTH = 0.25  # CPython's rule, for sweeps: once the frozen objects grew by a quarter
SWEEP_QUIET_S = 5.0  # a sweep waits for this long without use: longer than a pause between searches
SWEEP_MAX_WAIT_S = 600.0  # … unless it has been due this long: then the next IDLE_S pause will do
OUT_OF_REACH = 1 << 30  # generation 2's threshold while the app decides (never reached)
TAKES_OVER = sys.implementation.name == "cpython" and sys.version_info < (3, 14)  # see the module docstring


class IdleCollector:
    """Runs the app's full cyclic collections at idle moments (see the module docstring).

    ``quiet`` is how many seconds nobody has used the app (0 while it is at work for someone);
    ``clock`` is monotonic seconds (a test passes its own). ``tick`` is called on the app's thread
    a few times a second."""

    def __init__(self, quiet: Callable[[], float], clock: Callable[[], float] = time.monotonic) -> None:
        self._quiet = quiet
        self._clock = clock
        self._saved: tuple[int, int, int] | None = None
        self._swept = 0  # objects frozen when the last sweep (or the start) ended
        self._frozen = 0  # objects frozen when the last collection ended (at most)
        self._due_since: float | None = None
        self._sweep_due_since: float | None = None  # when a sweep was first seen due
        self.collections = 0  # full collections this collector ran, sweeps included
        self.sweeps = 0  # … of them that unfroze everything first
        self.forced = 0  # … of them run because one had waited MAX_WAIT_S

    @property
    def active(self) -> bool:
        return self._saved is not None

    def start(self) -> None:
        """Take full collections over, from the app's mount on: a full collection of start-up's
        objects left to CPython stopped the app for 410 ms in its first second, while the first
        pass began (bench/RESULTS.md §3). Nothing where CPython's own collector is incremental
        (TAKES_OVER)."""
        if not TAKES_OVER or self._saved is not None:
            return
        self._saved = gc.get_threshold()
        young, middle, _ = self._saved
        gc.set_threshold(young, middle, OUT_OF_REACH)
        self._frozen = self._swept = gc.get_freeze_count()

    def freeze(self) -> None:
        """The app's own freeze of what it holds (start-up, the panes' first fill): frozen without
        a collection, and the count the sweep rule grows from (on every CPython)."""
        gc.freeze()
        if self._saved is not None:
            self._frozen = self._swept = gc.get_freeze_count()

    def stop(self) -> None:
        """Give full collections back to CPython, with its thresholds as they were. What it froze
        stays frozen until the app unfreezes at unmount."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def due(self) -> bool:
        """CPython's count: ``FULL_AFTER`` young (generation 1) collections since the last full one."""
        return gc.get_count()[2] >= FULL_AFTER

    def sweep_due(self) -> bool:
        """The frozen objects grew by a quarter over what the last sweep left: time to look at
        them all again, for the cycles among them that died."""
        return self._frozen - self._swept >= max(self._swept, 1) * GROWTH

    def tick(self) -> bool:
        """Run a full collection if one is due and nobody is using the app (or it has waited
        MAX_WAIT_S); a sweep if one is due too and the quiet is long enough for it. True when
        one ran."""
        if self._saved is None or not gc.isenabled():
            return False
        if not self.due():
            self._due_since = None
            return False
        now = self._clock()
        if self._due_since is None:
            self._due_since = now
        quiet = self._quiet()
        idle = quiet >= IDLE_S
        if not idle and now - self._due_since < MAX_WAIT_S:
            return False
        self.forced += int(not idle)
        self._collect(sweep=idle and self._may_sweep(now, quiet))
        return True

    def _may_sweep(self, now: float, quiet: float) -> bool:
        """A sweep is due, and nobody has used the app for SWEEP_QUIET_S — or it has been due for
        SWEEP_MAX_WAIT_S."""
        if not self.sweep_due():
            self._sweep_due_since = None
            return False
        if self._sweep_due_since is None:
            self._sweep_due_since = now
        return quiet >= SWEEP_QUIET_S or now - self._sweep_due_since >= SWEEP_MAX_WAIT_S

    def _collect(self, sweep: bool) -> None:
        """A full collection of what is not frozen — of everything, for a sweep — then whatever
        is left frozen. A forced collection never sweeps: the person is there, and a sweep
        (158–274 ms, bench/RESULTS.md §3) can wait for them to pause."""
        if sweep:
            gc.unfreeze()
        gc.collect()
        survivors = 0 if sweep else len(gc.get_objects(generation=2))  # what is about to be frozen
        gc.freeze()
        self._frozen += survivors  # high by the frozen objects that died since: a bound
        if sweep or self.sweep_due():  # the exact count walks every frozen one (~4 ms for 330k): when it decides
            self._frozen = gc.get_freeze_count()
        if self._sweep_due_since is None and not sweep and self.sweep_due():
            self._sweep_due_since = self._clock()  # what this collection froze made a sweep due
        if sweep:
            self._swept = self._frozen
            self._sweep_due_since = None
            self.sweeps += 1
        self._due_since = None
        self.collections += 1
