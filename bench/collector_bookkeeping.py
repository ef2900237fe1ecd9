"""What counting the frozen objects costs an idle-time collection (tui/collector.py, issue 41).

The collector's sweep rule needs how many objects are frozen. ``gc.get_freeze_count()`` walks
every one of them; the collector now counts only what a collection is about to freeze (the
survivors in generation 2) and asks for the exact count only when a sweep may be due. This
times one ordinary collection with each way of counting, A B A B, on a heap like the app's at
the end of a real workspace's pass: 330,000 frozen objects and 5,000 new survivors per
collection.

Usage: python bench/collector_bookkeeping.py [--frozen 330000] [--new 5000] [--rounds 40]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frozen", type=int, default=330_000)
    parser.add_argument("--new", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    keep: list[object] = [Node() for _ in range(args.frozen)]
    gc.collect()
    gc.freeze()
    times: dict[str, list[float]] = {"exact count": [], "survivors only": []}
    for i in range(args.rounds):
        keep.append([Node() for _ in range(args.new)])
        exact = i % 2 == 0
        start = time.perf_counter()
        gc.collect()
        if exact:
            gc.freeze()
            gc.get_freeze_count()
        else:
            len(gc.get_objects(generation=2))
            gc.freeze()
        times["exact count" if exact else "survivors only"].append((time.perf_counter() - start) * 1000)
    gc.unfreeze()
    for way, ms in times.items():
        print(f"{way}: collection and count, median {statistics.median(ms):.2f} ms over {len(ms)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
