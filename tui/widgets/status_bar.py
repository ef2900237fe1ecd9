"""The one-line status bar: indexing/embedding progress, warnings, the OpenClaw home when one is
open (and that its databases are only read), search mode, workspace."""

from __future__ import annotations

from clawmem.engine.index.time_left import time_left_text
from clawmem.engine.status_lines import home_relative
from rich.cells import cell_len
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

PHASES = {
    "model": "loading model",
    "text": "indexing",
    "publish": "publishing",
    "embed": "embedding",
    "lines": "embedding lines",
    "wait": "waiting for another embedding pass",
}
SEPARATOR = "  ·  "


class StatusBar(Static):
    workspace: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    warning: reactive[str] = reactive("")
    openclaw: reactive[str] = reactive("")  # the OpenClaw state dir (``clawmem --openclaw``), or ""
    shared: reactive[str] = reactive("")  # where the index is shared (store.url), or ""

    def progress(self, phase: str, done: int, total: int, detail: str = "", seconds_left: float | None = None) -> None:
        if phase == "model":
            self.activity = detail or PHASES[phase]
        elif phase in PHASES:
            left = time_left_text(seconds_left) if phase in ("embed", "lines") else ""
            self.activity = (f"{PHASES[phase]} {done:,}/{total:,}" if total else PHASES[phase]) + (
                f" · {left}" if left else ""
            )
        elif phase == "paused":
            self.activity = "embedding paused" if done < total else ""
        elif phase == "cancelled":
            self.activity = "embedding cancelled" if detail == "embed" else "indexing cancelled"
        elif phase == "failed":
            self.activity = "indexing failed"
        else:
            self.activity = ""

    def on_resize(self) -> None:
        self.refresh()

    def render(self) -> Text:
        """Activity first (progress is never cut off), then the warning, which is shortened with
        an ellipsis when the line is too narrow, then the search mode and the workspace when
        they still fit."""
        width = self.size.width or 200
        text = Text(" ", no_wrap=True, overflow="ellipsis")
        room = width - 1
        parts: list[tuple[str, str, bool]] = []  # (text, style, may be shortened)
        if self.activity:
            parts.append((self.activity, "italic", False))
        if self.warning:
            parts.append((f"⚠ {self.warning}", "bold yellow", True))
        if self.openclaw:
            parts.append((f"◆ OpenClaw home {home_relative(self.openclaw)} · its databases read-only", "magenta", True))
        if self.shared:
            parts.append((f"⇄ shared index {self.shared}", "cyan", True))
        if self.mode:
            parts.append((self.mode, "", False))
        parts.append((home_relative(self.workspace), "bold", True))
        for index, (part, style, shorten) in enumerate(parts):
            sep = SEPARATOR if index else ""
            need = cell_len(sep) + cell_len(part)
            if need <= room:
                text.append(sep)
                text.append(part, style=style)
                room -= need
                continue
            if shorten and room - cell_len(sep) >= 12:  # enough for a useful start of it
                piece = Text(part, style=style)
                piece.truncate(room - cell_len(sep), overflow="ellipsis")
                text.append(sep)
                text.append_text(piece)
            elif index == 0:  # the first part is never dropped (the line's own ellipsis cuts it)
                text.append(part, style=style)
            break
        return text
