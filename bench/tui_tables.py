"""The app's tables at 10,000 rows: how long the Memory pane takes to show a 10,000-entry MEMORY.md,
and how long a refresh takes when one entry changes (in-place update by row key, no full redraw).

A workspace with a MEMORY.md of 10,000 bullets (a few carry trigger/importance annotations) is
opened in the real app, headless (Textual's ``run_test``, 160×45), keyword-only so no model is
involved. Timed with the app's own workers and messages:

1. **open**: selecting MEMORY.md in the tree → its 10,000 entries in the entries table (the
   engine parses the file in a worker; the table is filled by row key);
2. **refresh**: one entry is edited on disk and the pane refreshed → that entry's row is replaced
   (its row key carries the text's hash); the other 9,999 rows are compared, not rebuilt;
3. **no-op refresh**: the same refresh with nothing changed.

Beside each wall time, the longest **stall** of the app's event loop during it (the largest gap
between ticks of a 10 ms timer): the time the app could not answer a key. Parsing runs in a
worker thread; filling and measuring the table runs on the app's thread.

Each is repeated ``--runs`` times; medians are reported (written to bench/results/tui_tables.json).

Usage: python bench/tui_tables.py [--rows 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from clawmem.engine.config import load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.tui.app import ClawmemApp  # noqa: E402
from clawmem.tui.panes.memory import EntriesTable, MemoryPane  # noqa: E402


def memory_md(rows: int, edited: int | None = None) -> str:
    lines = ["# Long-Term Memory", ""]
    for i in range(rows):
        text = f"- Decision {i}: keep the rollout notes for service {i % 97} in the infra repo."
        if i == edited:
            text = f"- Decision {i}: EDITED — the rollout notes moved to the wiki."
        if i % 50 == 0:
            text += f" <!-- trigger: service {i % 97} --> <!-- importance: {1 + i % 10} -->"
        lines.append(text)
    return "\n".join(lines) + "\n"


async def wait_until(pilot: object, condition: object, timeout: float = 120.0) -> float:
    start = time.perf_counter()
    while not condition():  # type: ignore[operator]
        if time.perf_counter() - start > timeout:
            raise TimeoutError("the table did not get there in time")
        await pilot.pause(0.005)  # type: ignore[attr-defined]
    return time.perf_counter() - start


async def measure(base: Path, rows: int, runs: int) -> dict[str, object]:
    ws = base / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(memory_md(rows), encoding="utf-8")
    (base / "home").mkdir()
    (base / "home" / "config.toml").write_text('[embedding]\nprovider = "none"\n[tui]\nwatch = false\n')
    engine = MemoryEngine(load_settings(home=base / "home", workspace=ws))
    engine.sync()
    app = ClawmemApp(engine, watch=False, background_index=False)
    opened: list[float] = []
    refreshed: list[float] = []
    noop: list[float] = []
    stalls: dict[str, list[float]] = {"open": [], "refresh": [], "noop": []}
    ticks = [time.perf_counter(), 0.0]  # last tick, longest gap since reset

    def tick() -> None:
        now = time.perf_counter()
        ticks[1] = max(ticks[1], now - ticks[0])
        ticks[0] = now

    def reset() -> None:
        ticks[0], ticks[1] = time.perf_counter(), 0.0

    async with app.run_test(size=(160, 45)) as pilot:
        pane = app.query_one(MemoryPane)
        table = app.query_one(EntriesTable)
        app.set_interval(0.01, tick)
        for run in range(runs):
            await pilot.pause(0.2)
            table.clear()  # every row is added again: the full fill is what is timed
            reset()
            start = time.perf_counter()
            pane.current = "MEMORY.md"
            pane.load_file("MEMORY.md")
            # row_count is there at once; the table measures its rows when idle, and only then
            # its virtual size covers them all: that is when a person can see and scroll them.
            await wait_until(pilot, lambda: table.row_count == rows and table.virtual_size.height > rows)
            opened.append(time.perf_counter() - start)
            await pilot.pause(0.02)
            stalls["open"].append(ticks[1])
            (ws / "MEMORY.md").write_text(memory_md(rows, edited=rows // 2 + run), encoding="utf-8")
            line = rows // 2 + run + 3  # Decision i is on line i + 3
            old_key = next(str(r.value) for r in table.rows if str(r.value).startswith(f"{line}:"))
            reset()
            start = time.perf_counter()
            pane.refresh_from_engine(frozenset({"MEMORY.md"}))
            # An entry's row key carries its text's hash: the edited entry's row is replaced, the
            # other rows stay (compared cell by cell, not rebuilt).
            await wait_until(pilot, lambda k=old_key: k not in {str(r.value) for r in table.rows})
            refreshed.append(time.perf_counter() - start)
            await pilot.pause(0.02)
            stalls["refresh"].append(ticks[1])
            assert table.row_count == rows
            reset()
            start = time.perf_counter()
            pane.refresh_from_engine(frozenset({"MEMORY.md"}))
            await pilot.pause(0)
            for w in list(app.workers):
                await w.wait()
            await pilot.pause(0)
            noop.append(time.perf_counter() - start)
            await pilot.pause(0.02)
            stalls["noop"].append(ticks[1])
            (ws / "MEMORY.md").write_text(memory_md(rows), encoding="utf-8")
    engine.close()

    def med(values: list[float]) -> float:
        return round(statistics.median(values) * 1000, 1)

    return {
        "rows": rows,
        "runs": runs,
        "open_ms": med(opened),
        "refresh_one_changed_ms": med(refreshed),
        "refresh_nothing_changed_ms": med(noop),
        "longest_stall_ms": {phase: med(values) for phase, values in stalls.items()},
        "open_all_ms": [round(v * 1000, 1) for v in opened],
        "refresh_all_ms": [round(v * 1000, 1) for v in refreshed],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "tui_tables.json")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="clawmem-tui-bench-"))
    try:
        result = asyncio.run(measure(base, args.rows, args.runs))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"{result['rows']:,} entries: open {result['open_ms']} ms · refresh (1 changed) "
        f"{result['refresh_one_changed_ms']} ms · refresh (nothing changed) {result['refresh_nothing_changed_ms']} ms"
        f" · longest stall {result['longest_stall_ms']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
