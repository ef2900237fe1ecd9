"""The app's full cyclic collections run when nobody is using it (tui/collector.py, issue 41).

The real ``gc``: cycles are made, aged into generation 2 by young collections, and left
unreachable there, where only a full collection frees them. The test owns the clock and the
"nobody is using the app" signal, nothing else."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from clawmem.tui.collector import FULL_AFTER, MAX_WAIT_S, OUT_OF_REACH, TAKES_OVER, IdleCollector

from tests.tui.garbage import Node, old_garbage


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


def test_a_due_full_collection_waits_until_nobody_is_using_the_app(thresholds: tuple[int, int, int]) -> None:
    busy = [True]
    collector = IdleCollector(lambda: not busy[0], Clock())
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
    collector = IdleCollector(lambda: False, clock)
    collector.start()
    probe = old_garbage(50_000)
    assert not collector.tick()
    clock.now += MAX_WAIT_S - 1
    assert not collector.tick() and probe() is not None
    clock.now += 1
    assert collector.tick() and probe() is None  # garbage stays bounded by the wait
    assert collector.forced == 1
    collector.stop()


def test_no_collection_while_long_lived_objects_have_not_grown_by_a_quarter(thresholds: tuple[int, int, int]) -> None:
    collector = IdleCollector(lambda: True, Clock())
    held = [Node() for _ in range(40_000)]  # long-lived and kept: the last full collection leaves them
    collector.start()
    ran = collector.collections
    for _ in range(FULL_AFTER):
        gc.collect(1)  # young collections, but next to nothing new survives them
    assert not collector.due() and not collector.tick()
    assert collector.collections == ran
    collector.stop()
    assert len(held) == 40_000


def test_stopped_it_leaves_the_collector_as_cpython_had_it(thresholds: tuple[int, int, int]) -> None:
    collector = IdleCollector(lambda: True, Clock())
    collector.start()
    collector.stop()
    assert gc.get_threshold() == thresholds and not collector.active
    probe = old_garbage(10_000)
    assert not collector.tick()  # not active: it does nothing
    assert probe() is not None
    gc.collect()
