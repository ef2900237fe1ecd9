"""Cyclic garbage in Python's oldest generation, made on purpose: what only a full collection
frees (tests of tui/collector.py)."""

from __future__ import annotations

import gc
import weakref

from clawmem.tui.collector import FULL_AFTER


class Node:
    """One half of a reference cycle (weak-referenceable, so the test sees when it is freed)."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycles(pairs: int) -> list[Node]:
    """``pairs`` live two-node cycles, one node of each in the list."""
    held = []
    for _ in range(pairs):
        a, b = Node(), Node()
        a.other, b.other = b, a
        held.append(a)
    return held


def old_garbage(pairs: int) -> weakref.ref[Node]:
    """``pairs`` two-node cycles made live, aged into generation 2, then dropped: garbage that
    only a full collection frees. A weak reference to one of the nodes."""
    held = cycles(pairs)
    probe = weakref.ref(held[0])
    for _ in range(FULL_AFTER):
        gc.collect(1)  # young collections: the live cycles move to generation 2
    held.clear()
    return probe
