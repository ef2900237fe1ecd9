"""Showing a memory file rendered: how long the app's event loop stalls (issue 41).

The Memory pane shows the file a person opens — at start-up, and at every arrow key through its
tree — rendered as Markdown, on the app's thread. Three arms, side by side in one process, on
every file of a workspace that the pane would render (at most its ``RENDER_LIMIT`` characters and
``RENDER_MAX_LINES`` lines), in turns per file (each arm first in its turn):

- ``textual``: Textual's ``Markdown`` widget (the pane's view before tui/widgets/markdown_view.py):
  a widget per block, each styled and laid out;
- ``view``: ``MarkdownView`` (the product): one ``Static``, Rich laying the text out, in a scroll
  whose bar takes its columns only when the text is taller than the view (the Memory pane's);
- ``view_gutter_stable``: the same in a scroll that keeps its bar's gutter either way
  (``scrollbar-gutter: stable``), so that a tall text is laid out at one width instead of two:
  measured, not kept (bench/RESULTS.md §3).

Each file replaces the one shown before, as in the pane. Reported per renderer: the longest stall
of the event loop while the file is shown (the largest gap between ticks of a 5 ms timer, the
time the app could not have answered a key), from the show until the app has settled (0.3 s
without a gap over 30 ms), median and worst over the files, the five slowest files, and the app
thread's CPU time for it; and the ratios of the medians. Before each show the app settles too,
and collects and freezes what it holds, as the app's collector does at idle moments
(tui/collector.py), so no arm's work or garbage spills into another's window. Each arm is on a
screen of its own. The app is headless (``run_test``) at the width the Memory pane gives its
view at 160 columns. Written to bench/results/tui_markdown.json.

``--over-limit`` measures the files the pane shows as source instead (more than ``RENDER_LIMIT``
characters or ``RENDER_MAX_LINES`` lines), to see where a limit belongs. Per file, the sizes and
every arm's stall are listed too (``by_file``).

Usage: python bench/tui_markdown.py [--workspace DIR] [--files N] [--over-limit] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from clawmem.tui.panes.memory import RENDER_LIMIT, RENDER_MAX_LINES  # noqa: E402
from clawmem.tui.widgets.markdown_view import MarkdownView  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.containers import VerticalScroll  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widgets import Markdown  # noqa: E402

from bench.index_throughput import workspace_to_index  # noqa: E402

QUIET_S = 0.3  # settled: this long without a gap over SETTLED_GAP_S
SETTLED_GAP_S = 0.03
SETTLE_MAX_S = 5.0
ARMS = ("textual", "view", "view_gutter_stable")
VIEW_WIDTH = 128  # the Memory pane's view at 160 columns (the tree takes the rest)


class TextualScreen(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Markdown("", id="textual")


class ViewScreen(Screen[None]):
    """The view in a scroll whose bar's gutter is kept (``gutter="stable"``), or not (``"auto"``,
    the Memory pane's: a tall text laid out at two widths, without the bar and with it)."""

    def __init__(self, gutter: str) -> None:
        super().__init__()
        self.bar_gutter = gutter

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.styles.scrollbar_gutter = self.bar_gutter  # type: ignore[assignment]
        with scroll:
            yield MarkdownView(id="view-md")


class Both(App[None]):
    """A bare app holding each renderer on a screen of its own, one screen shown at a time: the
    other's widgets are not laid out beside it."""

    def on_mount(self) -> None:
        self.install_screen(TextualScreen(), "textual")
        self.install_screen(ViewScreen("auto"), "view")
        self.install_screen(ViewScreen("stable"), "view_gutter_stable")
        self.push_screen("textual")


def eligible(ws: Path, over: bool = False) -> list[Path]:
    """The workspace's Markdown files the Memory pane would render rather than show as source
    (``over``: those it shows as source, too long to render)."""
    out = []
    for path in sorted(ws.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if (len(text) <= RENDER_LIMIT and text.count("\n") <= RENDER_MAX_LINES) != over:
            out.append(path)
    return out


async def measure(root: Path, files: list[Path]) -> dict[str, object]:
    app = Both()
    got: dict[str, list[tuple[float, float, str]]] = {arm: [] for arm in ARMS}
    sizes: dict[str, tuple[int, int]] = {}  # file -> (characters, lines)
    async with app.run_test(size=(VIEW_WIDTH, 45)) as pilot:
        gaps: list[float] = []
        last = [time.perf_counter()]

        def tick() -> None:
            now = time.perf_counter()
            gaps.append(now - last[0])
            last[0] = now

        app.set_interval(0.005, tick)

        async def settled() -> None:
            """Until QUIET_S pass with no gap over SETTLED_GAP_S: the work before is all done
            (a hidden renderer's own relayout, Textual's mounts after its executor parse)."""
            began = time.perf_counter()
            while time.perf_counter() - began < SETTLE_MAX_S:
                mark = len(gaps)
                await pilot.pause(QUIET_S)
                if all(g <= SETTLED_GAP_S for g in gaps[mark:]):
                    return

        await settled()
        for i, path in enumerate(files):
            text = path.read_text(encoding="utf-8", errors="replace")
            name = str(path.relative_to(root))  # not the bare name: diaries share theirs across folders
            order = ARMS[i % len(ARMS) :] + ARMS[: i % len(ARMS)]  # each arm first in turn
            for arm in order:
                app.switch_screen(arm)
                await settled()
                gc.collect()  # as the app's own collector does at idle moments (tui/collector.py):
                gc.freeze()  # … the other renderer's garbage is not this show's full collection
                gaps.clear()
                cpu = time.thread_time()
                if arm == "textual":
                    app.screen.query_one("#textual", Markdown).update(text)
                else:
                    app.screen.query_one("#view-md", MarkdownView).show(text)
                await settled()
                cpu = time.thread_time() - cpu
                got[arm].append((max(gaps) - 0.005, cpu, name))
                sizes[name] = (len(text), text.count("\n") + 1)
    out: dict[str, object] = {"files": len(files)}
    for arm, rows in got.items():
        stalls = [s * 1000 for s, _, _ in rows]
        out[arm] = {
            "stall_median_ms": round(statistics.median(stalls), 1),
            "stall_p90_ms": round(sorted(stalls)[int(0.9 * (len(stalls) - 1))], 1),
            "stall_max_ms": round(max(stalls), 1),
            "stalls_over_100ms": sum(s > 100 for s in stalls),
            "app_thread_cpu_median_ms": round(statistics.median(c * 1000 for _, c, _ in rows), 1),
            "slowest": [[name, round(s * 1000, 1)] for s, _, name in sorted(rows, reverse=True)[:5]],
        }
    out["by_file"] = [  # [file, characters, lines, Textual's stall ms, the view's, the view's with the gutter kept]
        [name, *sizes[name], round(t * 1000, 1), round(v * 1000, 1), round(g * 1000, 1)]
        for (t, _, name), (v, _, _), (g, _, _) in zip(
            got["textual"], got["view"], got["view_gutter_stable"], strict=True
        )
    ]
    t, v = out["textual"], out["view"]
    out["stall_median_ratio_view_to_textual"] = round(v["stall_median_ms"] / t["stall_median_ms"], 2)  # type: ignore[index]
    g = out["view_gutter_stable"]
    out["stall_median_ratio_gutter_stable_to_view"] = round(g["stall_median_ms"] / v["stall_median_ms"], 2)  # type: ignore[index]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workspace", type=Path, help="a workspace of your own (read only); default LoCoMo + the fixture"
    )
    parser.add_argument("--files", type=int, help="at most this many files (spread over the list)")
    parser.add_argument(
        "--over-limit", action="store_true", help="the files the pane shows as source instead (too long to render)"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "tui_markdown.json")
    args = parser.parse_args()
    ws = workspace_to_index(args.workspace, 1)
    if ws is None:
        return 2
    files = eligible(ws, args.over_limit)
    if not files:
        print(f"{ws} has no file {'over' if args.over_limit else 'within'} the Memory pane's limit", file=sys.stderr)
        return 2
    if args.files is not None and args.files < len(files):
        step = len(files) / args.files
        files = [files[int(i * step)] for i in range(args.files)]
    result = {
        "workspace": str(args.workspace) if args.workspace else "LoCoMo 1 + fixture",
        **asyncio.run(measure(ws, files)),
    }
    gc.unfreeze()
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
