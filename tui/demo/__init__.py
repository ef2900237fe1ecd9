"""The demo workspace behind ``clawmem --demo``: a Hangzhou weekend trip written in Chinese
(hotel decision, budget, return ticket, a superseded USER.md preference, triggers and importance
in MEMORY.md) plus English work notes, some months old.

Diary dates are relative to today (from the clock, so ``CLAWMEM_NOW`` makes it reproducible),
so decay looks the way it would in a real workspace whenever the demo is opened.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from clawmem.engine.config import load_settings
from clawmem.engine.errors import ClawmemError
from clawmem.tui.demo.content import FILES

MARKER = ".clawmem-demo"


def write_demo(dest: Path, today: date | None = None) -> Path:
    """Write the demo into ``dest`` (new or empty, or a previous demo) and return it."""
    if today is None:
        today = load_settings(read_config_file=False).clock().local_now().date()
    dest = dest.expanduser().resolve()
    if dest.exists() and any(dest.iterdir()) and not (dest / MARKER).exists():
        raise ClawmemError(f"{dest} is not empty; give an empty or new directory for the demo")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARKER).write_text("written by clawmem --demo\n", encoding="utf-8")

    days = {f"d{n}": (today - timedelta(days=n)).isoformat() for n in range(0, 400)}
    for template, text in FILES:
        rel = template.format(**days)
        body = text.format(**days, today=today.isoformat())
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body.lstrip("\n"), encoding="utf-8")
    return dest
