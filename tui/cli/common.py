"""Shared CLI plumbing: global options, building the engine, output helpers, progress bars."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from engine.config import Settings, default_home, load_settings
from engine.facade import MemoryEngine


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", metavar="DIR", help="clawmem home (default ~/.clawmem or $CLAWMEM_HOME)")
    parser.add_argument("--workspace", metavar="DIR", help="the memory workspace (default <home>/workspace)")
    parser.add_argument("--agent", metavar="ID", help="agent id (default main)")
    parser.add_argument("--model", metavar="PATH", help="a GGUF embedding model to use instead of the default")


def global_parent() -> argparse.ArgumentParser:
    """The global options again, so they also work after the subcommand (``clawmem index --home X``)."""
    parent = argparse.ArgumentParser(add_help=False)
    for flag, meta in (("--home", "DIR"), ("--workspace", "DIR"), ("--agent", "ID"), ("--model", "PATH")):
        parent.add_argument(flag, metavar=meta, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parent


def settings_from(args: argparse.Namespace, **overrides: Any) -> Settings:
    home = Path(args.home).expanduser() if getattr(args, "home", None) else None
    workspace = Path(args.workspace).expanduser() if getattr(args, "workspace", None) else None
    return load_settings(
        home=home,
        workspace=workspace,
        agent_id=getattr(args, "agent", None),
        model=getattr(args, "model", None),
        overrides=overrides or None,
    )


def engine_from(args: argparse.Namespace, **overrides: Any) -> MemoryEngine:
    return MemoryEngine(settings_from(args, **overrides))


def fail(message: str) -> None:
    print(f"clawmem: error: {message}", file=sys.stderr)


def warn(message: str) -> None:
    print(f"clawmem: warning: {message}", file=sys.stderr)


def to_jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: to_jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float):
        return round(value, 6)
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2) + "\n")


def log_exception(args: argparse.Namespace) -> Path:
    home = Path(getattr(args, "home", None) or default_home()).expanduser()
    log = home / "logs" / "clawmem.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as fh:
            traceback.print_exc(file=fh)
    except OSError:
        traceback.print_exc()
    return log


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar on a terminal; a no-op when piped or for --json."""
    if not enabled or not sys.stderr.isatty():
        yield lambda phase, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    labels = {"text": "indexing text", "embed": "embedding", "publish": "publishing", "model": "preparing model"}
    with Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(labels.get(phase, phase), total=max(total, 1))
            bar.update(tasks[phase], completed=done, total=max(total, 1))

        yield update
