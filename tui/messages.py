"""Typed messages between thread workers and widgets (no widget is touched from a thread)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class IndexProgress(Message, bubble=False):
    """The background index or embedding pass moved on."""

    phase: str  # "text", "publish", "embed", "done", "cancelled", "failed"
    done: int
    total: int
    detail: str = ""
    seconds_left: float | None = None  # the engine's estimate for the whole embedding pass

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexProgress) and message.phase == self.phase


@dataclass
class IndexChanged(Message, bubble=False):
    """The index (and perhaps files) changed: panes refresh what they show."""

    paths: frozenset[str]


@dataclass
class FilesChanged(Message, bubble=False):
    """The watcher saw memory files change on disk."""

    paths: frozenset[str]


@dataclass
class OpenLocation(Message):
    """Show a file (and a line) in the Memory pane."""

    path: str
    line: int | None = None


@dataclass
class EditFile(Message):
    """Open a file in the Editor pane."""

    path: str
    line: int | None = None


@dataclass
class EngineFailed(Message):
    """An engine call failed with a user-facing one-line message."""

    message: str
    title: str = "clawmem"
