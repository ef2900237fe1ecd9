"""The CLI's output helpers: JSON on stdout, and a progress bar on a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from clawmem.engine.index.time_left import time_left_text
from clawmem.engine.json_form import json_form


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(json_form(value), ensure_ascii=False, indent=2) + "\n")


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[..., None]]:
    """A rich progress bar on a terminal; a no-op when piped or for --json. ``update(phase, done,
    total[, seconds_left])``: the time left is the engine's estimate for the whole embedding pass
    (chunks and then lines, engine/index/time_left.py), not a guess from this bar alone."""
    if not enabled or not sys.stderr.isatty():
        yield lambda phase, done, total, seconds_left=None: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    labels = {
        "text": "indexing text",
        "embed": "embedding",
        "lines": "embedding lines",
        "publish": "publishing",
        "model": "preparing model",
    }
    with Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[left]}"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int, seconds_left: float | None = None) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(labels.get(phase, phase), total=max(total, 1), left="")
            bar.update(tasks[phase], completed=done, total=max(total, 1), left=time_left_text(seconds_left))

        yield update
