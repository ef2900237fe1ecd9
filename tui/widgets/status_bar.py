"""The one-line status bar: workspace, search mode, indexing/embedding progress, warnings."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

PHASES = {
    "model": "loading model",
    "text": "indexing",
    "publish": "publishing",
    "embed": "embedding",
}


class StatusBar(Static):
    workspace: reactive[str] = reactive("")
    activity: reactive[str] = reactive("")
    mode: reactive[str] = reactive("")
    warning: reactive[str] = reactive("")

    def progress(self, phase: str, done: int, total: int, detail: str = "") -> None:
        if phase == "model":
            self.activity = detail or PHASES[phase]
        elif phase in PHASES:
            self.activity = f"{PHASES[phase]} {done:,}/{total:,}" if total else PHASES[phase]
        elif phase == "cancelled":
            self.activity = "indexing cancelled"
        elif phase == "failed":
            self.activity = "indexing failed"
        else:
            self.activity = ""

    def render(self) -> Text:
        """Warning first (it must never be cut off), then activity, mode and the workspace."""
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" ")
        if self.warning:
            text.append(f"⚠ {self.warning}", style="bold yellow")
            text.append("  ·  ")
        if self.activity:
            text.append(self.activity, style="italic")
            text.append("  ·  ")
        if self.mode:
            text.append(self.mode)
            text.append("  ·  ")
        text.append(self._short(self.workspace), style="bold")
        return text

    @staticmethod
    def _short(path: str) -> str:
        from pathlib import Path

        home = str(Path.home())
        return "~" + path[len(home) :] if path.startswith(home + "/") else path
