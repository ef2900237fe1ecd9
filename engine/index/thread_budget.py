"""How many threads an indexing pass may give the model right now: the cores nothing else uses.

llama.cpp's threads spin-wait for each other at every step of a decode, so a thread on a core
that another process keeps busy stalls all of them: on the 2-core machine two threads index
1.84x faster than one when nothing else runs and 1.65x *slower* when the other core is busy
(bench/RESULTS.md §3, "Threads for indexing"). The rule: every core is the pass's except those
other processes kept busy since the last batch. "Busy" is the machine's CPU time (Linux's
/proc/stat) minus this process's own, in cores; a core counts as taken once other work used a
quarter of it, since a quarter of a core taken from a spinning thread already costs more than
the thread gains. The search path keeps its own thread count (``embedding.threads``).

Measured per batch, so a pass that starts on a quiet machine drops to one thread when a build
starts beside it, and takes the core back when the build ends. Where /proc/stat does not exist
(macOS, Windows), the pass uses ``embedding.threads`` as before.

Work in this process counts too, when a person is waiting on it: while someone uses the app (a
key, a click, a search in the last FOREGROUND_S seconds; :class:`Foreground`) the pass leaves one
core to them. With both cores embedding, a screen's layout that takes 12 ms on a quiet machine
took 80-140 ms; the app stalled past 100 ms 15 times a minute while a real workspace indexed
and answered a search in 763 ms (median), with a core left to it 2.3 times and 325 ms, the
pass 1.34x as long (bench/app_while_indexing.py, bench/RESULTS.md §3).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

PROC_STAT = Path("/proc/stat")
TAKEN_AT = 0.25  # other work's share of a core from which that core is not the pass's
MAX_THREADS = 8  # a 118M-parameter encoder gains nothing measurable beyond this
FIRST_SAMPLE_S = 0.2  # the first decision looks this long at the machine before the pass starts
FOREGROUND_S = 10.0  # after their last key or search a person still reads what it showed them

Sampler = Callable[[], tuple[float, float, float] | None]  # (wall s, machine busy s, own CPU s)


def _clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - every Linux has it
        return 100


def usable_cores() -> int:
    """The cores this process may run on (its affinity; all of them where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def machine_sample() -> tuple[float, float, float] | None:
    """(monotonic seconds, CPU seconds the whole machine was busy, this process's CPU seconds),
    or None where the kernel does not say (no /proc/stat)."""
    try:
        with PROC_STAT.open("rb") as stat:
            first = stat.readline().split()
    except OSError:
        return None
    if len(first) < 5 or first[0] != b"cpu":
        return None
    ticks = [int(v) for v in first[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    busy = sum(ticks[:8]) - idle  # user nice system idle iowait irq softirq steal (guest is in user)
    return time.monotonic(), busy / _clock_ticks(), time.process_time()


class Foreground:
    """When someone last used this process: a key or a click in the app, a search from any front
    end. ``active()`` is true for FOREGROUND_S seconds after the last ``touch()``."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: float | None = None

    def touch(self) -> None:
        self._last = self._clock()

    def quiet_for(self) -> float:
        """Seconds since the last ``touch()`` (infinite before the first)."""
        return math.inf if self._last is None else self._clock() - self._last

    def active(self) -> bool:
        return self.quiet_for() < FOREGROUND_S


class ThreadBudget:
    """Threads for the next batch of an indexing pass. ``setting``: a fixed count, or None for
    the load rule above; ``fallback``: the count where the load cannot be read; ``foreground``:
    this process's own person, who gets a core of the load rule's while active."""

    def __init__(
        self,
        setting: int | None,
        fallback: int,
        *,
        cores: int | None = None,
        sampler: Sampler = machine_sample,
        sleep: Callable[[float], None] = time.sleep,
        foreground: Foreground | None = None,
    ) -> None:
        self.setting = setting
        self.fallback = max(1, fallback)
        self.cores = max(1, min(cores or usable_cores(), MAX_THREADS))
        self._sampler = sampler
        self._sleep = sleep
        self._foreground = foreground
        self._last: tuple[float, float, float] | None = None
        self.other_cores = 0.0  # what other processes used at the last decision, in cores
        self.current = setting or 0

    def threads(self) -> int:
        """The count for the next batch (re-measured since the previous call)."""
        if self.setting is not None:
            self.current = self.setting
            return self.current
        now = self._sampler()
        if now is None:
            self.current = self.fallback
            return self.current
        if self._last is None:  # nothing to compare with yet: look at the machine briefly
            self._sleep(FIRST_SAMPLE_S)
            self._last, now = now, self._sampler()
            if now is None:  # pragma: no cover - /proc/stat vanished between two reads
                self.current = self.fallback
                return self.current
        wall = now[0] - self._last[0]
        if wall > 0:
            other = (now[1] - self._last[1]) - (now[2] - self._last[2])
            self.other_cores = max(0.0, other / wall)
        self._last = now
        taken = math.ceil(max(0.0, self.other_cores - TAKEN_AT))
        if self._foreground is not None and self._foreground.active():
            taken += 1  # the app's thread, or a search's, is someone waiting: theirs first
        self.current = max(1, self.cores - taken)
        return self.current
