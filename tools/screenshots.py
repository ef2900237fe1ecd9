"""Regenerate the README's screenshots (``make screenshots``): one SVG per pane of the app,
on the demo workspace at a fixed clock, so they only change when the app does.

The first panes are shot on the demo as ``clawmem --demo`` writes it. Then history is made
through the engine, as the snapshot tests do: the fixture transcripts are imported (one with a
poisoned web page), a fact of each session is flushed, one fact is recalled on three earlier days
by three queries (engines whose clock is set to those days) so Dreaming proposes it, and standing
intents and a timed job are created. The Dreams, Intents, Sessions and Forget panes are shot on
that. Ids that would be random (proposals, runs, intents) come from a fixed sequence.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import os
import shutil
import sys
import uuid
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["CLAWMEM_NOW"] = "2026-11-05T09:00:00+00:00"
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("CLAWMEM_MODELS_DIR", str(ROOT / ".cache" / "models"))
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from clawmem.engine.config import Settings, load_settings  # noqa: E402
from clawmem.engine.facade import MemoryEngine  # noqa: E402
from clawmem.tui.app import ClawmemApp  # noqa: E402
from clawmem.tui.demo import write_demo  # noqa: E402
from clawmem.tui.settle import settle  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

SESSIONS = ROOT / "tests" / "fixtures" / "sessions"
HZ, LINGYIN = "sess-hz-01", "sess-lingyin-02"
LINGYIN_FACT = "- 灵隐寺门票已订好：周六上午 9:00，两位成人，每人 75 元。"
HZ_FACT = "- 杭州周末预算：两人 3000 元。"
# Three unique queries on three days: enough recalls for Dreaming to propose the Lingyin fact.
RECALLS = (
    ("2026-11-01T10:00:00+00:00", "灵隐寺门票"),
    ("2026-11-02T10:00:00+00:00", "周六上午 灵隐寺"),
    ("2026-11-03T10:00:00+00:00", "两位成人 门票"),
)
OUT = ROOT / "screenshots"
BASE = Path("/tmp/clawmem-demo")  # a fixed path: it shows in the status bar
SIZE = (140, 40)
CONFIG = "[tui]\nshow_timings = false\ncursor_blink = false\nwatch = false\n"


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


async def shot_dreams(pilot: Pilot[object]) -> None:
    await pilot.press("6")  # the review queue: the proposed MEMORY.md change with its diff
    await settle(pilot)
    await pilot.press("p")


async def shot_intents(pilot: Pilot[object]) -> None:
    await pilot.press("7")


async def shot_sessions(pilot: Pilot[object]) -> None:
    await pilot.press("8")  # newest first: the cron digest, then the Hangzhou trip
    await settle(pilot)
    await pilot.press("j")  # its transcript: the web page's result and the turn it taints


async def shot_forget(pilot: Pilot[object]) -> None:
    await pilot.press("8")
    await settle(pilot)
    await pilot.press("j", "j", "f")  # forget the Lingyin session: its dry-run plan
    await settle(pilot)
    await pilot.press("j")  # memory entries → the memory lines it would remove


# (name, steps, made after the history is built)
SHOTS: list[tuple[str, Callable[[Pilot[object]], Awaitable[None]], bool]] = [
    ("memory", shot_memory, False),
    ("search", shot_search, False),
    ("editor", shot_editor, False),
    ("status", shot_status, False),
    ("context", shot_context, False),
    ("dreams", shot_dreams, True),
    ("intents", shot_intents, True),
    ("sessions", shot_sessions, True),
    ("forget", shot_forget, True),
]


def fixed_uuids() -> None:
    """Proposal, run, intent and job ids are random uuid4s and the panes show them."""
    counter = itertools.count(1)

    def fake_uuid4() -> uuid.UUID:
        return uuid.UUID(bytes=hashlib.sha1(f"clawmem-screenshots-{next(counter)}".encode()).digest()[:16], version=4)

    uuid.uuid4 = fake_uuid4  # type: ignore[assignment]


def engine_at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def make_history(settings: Settings) -> None:
    """Sessions, flushes, recalls on earlier days, a Dreaming proposal, intents and a job."""
    with engine_at(settings, "2026-11-04T20:00:00+00:00") as e:
        e.sessions.import_file(SESSIONS / "hangzhou-trip.jsonl", note=True)
        e.sessions.import_file(SESSIONS / "lingyin-tickets.jsonl", note=True)
        e.sessions.import_file(SESSIONS / "cron-digest.jsonl")
        e.sessions.flush(LINGYIN, LINGYIN_FACT, date="2026-10-31")
        e.sessions.flush(HZ, HZ_FACT, date="2026-10-30")
        e.sync()
    for now, query in RECALLS:
        with engine_at(settings, now) as e:
            hits = e.search(query, legs="keyword", sync=False).results
            if not any(h.path == "memory/2026-10-31.md" for h in hits):
                raise SystemExit(f"the recall {query!r} did not find the flushed fact")
    with engine_at(settings, "2026-11-04T03:00:00+00:00") as e:
        run = e.dreaming.run()
        if run.proposal is None:
            raise SystemExit("Dreaming proposed nothing: the Dreams screenshot would be empty")
    with engine_at(settings, "2026-11-01T10:00:00+00:00") as e:
        create = e.intents.create
        create("周末去杭州前提醒确认返程车票（候选 G7512）", "杭州; hangzhou; 返程", channel="telegram", sender="alice")
        create("提醒带上酒店的取消政策截图", "酒店; 取消政策", channel="telegram", sender="alice", max_fires=1)
        create(
            "Ask whether the certbot renewal alert ever fired",
            "certbot",
            channel="telegram",
            sender="alice",
            any_channel=True,
        )
        e.jobs.add(
            "Morning: check the Hangzhou return tickets",
            cron="0 8 * * *",
            tz="Asia/Shanghai",
            channel="telegram",
            sender="alice",
        )
    with engine_at(settings, "2026-11-03T09:00:00+00:00") as e:
        e.intents.match("周末去杭州，返程车票还没订", channel="telegram", sender="alice", apply=True)


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
    fixed_uuids()
    engine = fresh_engine()
    history = False
    for name, steps, after_history in SHOTS:
        if after_history and not history:
            engine.close()
            make_history(engine.settings)
            engine = MemoryEngine(engine.settings)
            history = True
        app = ClawmemApp(engine, watch=False, background_index=False)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await steps(pilot)
            await settle(pilot)  # still: a condition, not a time (tui/settle.py)
            app.save_screenshot(filename=f"{name}.svg", path=str(OUT))
        print(f"screenshots/{name}.svg")
    engine.close()


if __name__ == "__main__":
    asyncio.run(main())
