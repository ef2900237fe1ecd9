"""The app's full cyclic collections run when nobody is using it, and freeze what they leave
(tui/collector.py, issue 41).

The real ``gc``: cycles are made, aged into generation 2 by young collections, and left
unreachable there, where only a full collection frees them — or left unreachable inside the
freeze, where only a sweep does. The test owns the clock and the "seconds nobody has used the
app" signal, nothing else."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from clawmem.tui.collector import (
    FULL_AFTER,
    GROWTH,
    IDLE_S,
    MAX_WAIT_S,
    OUT_OF_REACH,
    SWEEP_MAX_WAIT_S,
    SWEEP_QUIET_S,
    TAKES_OVER,
    IdleCollector,
)

from tests.tui.garbage import Node, cycles, old_garbage


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


pytestmark = pytest.mark.skipif(not TAKES_OVER, reason="CPython 3.14+ collects the old objects incrementally")


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)
    gc.unfreeze()  # what the collector froze (the app does so at unmount)


AWAY = SWEEP_QUIET_S + 1  # seconds without use: a person reading or away
PAUSE = IDLE_S  # … between two keys or two searches


def age() -> None:
    """Young collections enough to move what is live into generation 2 and make a full one due."""
    for _ in range(FULL_AFTER):
        gc.collect(1)


def test_a_due_full_collection_waits_until_nobody_is_using_the_app(thresholds: tuple[int, int, int]) -> None:
    busy = [True]
    collector = IdleCollector(lambda: 0.0 if busy[0] else AWAY, Clock())
    collector.start()
    assert gc.get_threshold() == (thresholds[0], thresholds[1], OUT_OF_REACH)  # CPython's full ones off
    probe = old_garbage(50_000)
    assert collector.due()
    assert not collector.tick()  # someone is typing: not now
    assert probe() is not None  # the garbage is still there
    busy[0] = False
    assert collector.tick()
    assert probe() is None  # freed by the collection run at the idle moment
    assert not collector.due() and not collector.tick()  # nothing new: nothing more to do
    collector.stop()
    assert gc.get_threshold() == thresholds


def test_a_collection_due_too_long_runs_even_while_the_app_is_in_use(thresholds: tuple[int, int, int]) -> None:
    clock = Clock()
    collector = IdleCollector(lambda: 0.0, clock)
    collector.start()
    probe = old_garbage(50_000)
    assert not collector.tick()
    clock.now += MAX_WAIT_S - 1
    assert not collector.tick() and probe() is not None
    clock.now += 1
    assert collector.tick() and probe() is None  # garbage stays bounded by the wait
    assert collector.forced == 1
    collector.stop()


def test_what_a_collection_leaves_is_frozen_so_the_next_walks_only_the_new(thresholds: tuple[int, int, int]) -> None:
    collector = IdleCollector(lambda: AWAY, Clock())
    collector.start()
    collector.freeze()  # as the app does after its first refresh
    frozen = gc.get_freeze_count()  # everything live then: the test process's modules
    kept = 10_000
    assert frozen * GROWTH > 2 * kept  # too few new ones to make a sweep due
    held = [Node() for _ in range(kept)]  # long-lived and kept
    age()
    assert sum(isinstance(o, Node) for o in gc.get_objects(generation=2)) >= kept  # walked by the next one
    assert collector.tick()
    assert gc.get_freeze_count() >= frozen + kept  # … and then frozen
    assert not any(isinstance(o, Node) for o in gc.get_objects(generation=2))  # not walked again
    newer = [Node() for _ in range(1_000)]
    age()
    assert sum(isinstance(o, Node) for o in gc.get_objects(generation=2)) == 1_000  # only what is new
    assert collector.tick() and collector.sweeps == 0
    collector.stop()
    assert len(held) == kept and len(newer) == 1_000


def test_a_cycle_that_died_frozen_is_freed_once_the_frozen_objects_grew_by_a_quarter(
    thresholds: tuple[int, int, int],
) -> None:
    quiet, clock = [AWAY], Clock()
    collector = IdleCollector(lambda: quiet[0], clock)
    collector.start()
    collector.freeze()  # start-up's objects
    fill = [Node() for _ in range(gc.get_freeze_count())]  # the panes' first fill doubles them
    collector.freeze()  # … and the app freezes them too: what it holds, not growth to sweep for
    assert not collector.sweep_due()
    swept = gc.get_freeze_count()
    held = cycles(1_000)
    probe = weakref.ref(held[0])
    age()
    assert collector.tick() and not collector.sweep_due()  # alive, frozen
    held.clear()  # dead now, inside the freeze
    age()
    assert collector.tick() and probe() is not None  # an ordinary collection does not see it: the price
    grown = [Node() for _ in range(int(swept * GROWTH) + 1)]  # the frozen objects grow by a quarter
    age()
    assert collector.tick() and collector.sweep_due()
    quiet[0] = 0.0
    age()
    assert not collector.tick()  # due, but the person is there
    clock.now += MAX_WAIT_S
    assert collector.tick() and collector.forced == 1  # due too long: forced while in use …
    assert probe() is not None and collector.sweeps == 0  # … but a sweep waits for a pause
    quiet[0] = AWAY
    age()
    assert collector.tick() and probe() is None  # the sweep: everything unfrozen, collected, frozen again
    assert collector.sweeps == 1 and not collector.sweep_due()
    collector.stop()
    assert len(grown) > 0 and len(fill) > 0


def test_a_sweep_waits_for_a_longer_quiet_than_a_collection_unless_due_too_long(
    thresholds: tuple[int, int, int],
) -> None:
    # A sweep walks everything (158-274 ms on a real workspace, bench/RESULTS.md §3): a pause
    # between two searches is enough for a collection, not for it.
    quiet, clock = [PAUSE], Clock()
    collector = IdleCollector(lambda: quiet[0], clock)
    collector.start()
    collector.freeze()
    swept = gc.get_freeze_count()
    held = cycles(1_000)
    probe = weakref.ref(held[0])
    grown = [Node() for _ in range(int(swept * GROWTH) + 1)]
    age()
    assert collector.tick() and collector.sweep_due()  # frozen, and now a quarter more
    held.clear()  # dead inside the freeze: only a sweep frees it
    age()
    assert collector.tick() and collector.sweeps == 0 and probe() is not None  # a pause: a collection only
    quiet[0] = AWAY
    age()
    assert collector.tick() and collector.sweeps == 1 and probe() is None  # away: the sweep

    more = [Node() for _ in range(int(gc.get_freeze_count() * GROWTH) + 1)]  # due again, and kept busy:
    cycle = cycles(1)
    second = weakref.ref(cycle[0])
    quiet[0] = PAUSE
    age()
    assert collector.tick() and collector.sweep_due()  # frozen with the rest
    del cycle
    for _ in range(3):
        clock.now += SWEEP_MAX_WAIT_S / 4
        age()
        assert collector.tick() and collector.sweeps == 1 and second() is not None  # only pauses, so far
    clock.now += SWEEP_MAX_WAIT_S / 4
    age()
    assert collector.tick() and collector.sweeps == 2 and second() is None  # due too long: a pause will do
    collector.stop()
    assert len(grown) > 0 and len(more) > 0


def test_stopped_it_leaves_the_collector_as_cpython_had_it(thresholds: tuple[int, int, int]) -> None:
    collector = IdleCollector(lambda: AWAY, Clock())
    collector.start()
    collector.stop()
    assert gc.get_threshold() == thresholds and not collector.active
    probe = old_garbage(10_000)
    assert not collector.tick()  # not active: it does nothing
    assert probe() is not None
    gc.collect()
