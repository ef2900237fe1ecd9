"""Regenerate the README's screenshots (``make screenshots``): one SVG per pane of the app,
on the demo workspace at a fixed clock, so they only change when the app does."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from textual.pilot import Pilot  # noqa: E402
from textual.worker import WorkerState  # noqa: E402

from engine.config import load_settings  # noqa: E402
from engine.facade import MemoryEngine  # noqa: E402
from tui.app import ClawmemApp  # noqa: E402
from tui.demo import write_demo  # noqa: E402

OUT = ROOT / "screenshots"
BASE = Path("/tmp/clawmem-demo")  # a fixed path: it shows in the status bar
SIZE = (140, 40)
CONFIG = "[tui]\nshow_timings = false\ncursor_blink = false\nwatch = false\n"


async def settle(pilot: Pilot[object], seconds: float = 0.6) -> None:
    await pilot.pause(seconds)
    for _ in range(400):
        if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
            break
        await pilot.pause(0.05)
    await pilot.pause(0.2)


async def shot_memory(pilot: Pilot[object]) -> None:
    await pilot.press("down")


async def shot_search(pilot: Pilot[object]) -> None:
    await pilot.press("3", *"为什么没订湖景房", "enter")


async def shot_status(pilot: Pilot[object]) -> None:
    await pilot.press("4")


async def shot_context(pilot: Pilot[object]) -> None:
    await pilot.press("5")
    await settle(pilot)
    pilot.app.query_one("#context-message").focus()
    await pilot.press(*"周末去杭州的返程车票订好了吗", "enter")


async def shot_editor(pilot: Pilot[object]) -> None:
    await pilot.press("down", "e")


SHOTS: list[tuple[str, Callable[[Pilot[object]], Awaitable[None]]]] = [
    ("memory", shot_memory),
    ("search", shot_search),
    ("editor", shot_editor),
    ("status", shot_status),
    ("context", shot_context),
]


def fresh_engine() -> MemoryEngine:
    shutil.rmtree(BASE, ignore_errors=True)
    write_demo(BASE / "workspace", date(2026, 11, 5))
    (BASE / "home").mkdir(parents=True)
    (BASE / "home" / "config.toml").write_text(CONFIG, encoding="utf-8")
    engine = MemoryEngine(load_settings(home=BASE / "home", workspace=BASE / "workspace"))
    engine.sync()
    return engine


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    engine = fresh_engine()
    for name, steps in SHOTS:
        app = ClawmemApp(engine, watch=False, background_index=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await steps(pilot)
            await settle(pilot, 1.0)
            app.save_screenshot(filename=f"{name}.svg", path=str(OUT))
        print(f"screenshots/{name}.svg")
    engine.close()


if __name__ == "__main__":
    asyncio.run(main())
