"""Shared CLI plumbing: global options, flag-value types, building the engine, output helpers,
progress bars.

Flag values are checked by the types below, which raise :class:`~engine.errors.ClawmemError`
(not argparse's ``ArgumentTypeError``): argparse lets that through, and ``main`` prints it as one
line and exits 1 — a bad *value* is a user error. Unknown commands or flags and missing
arguments stay argparse's usage errors (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import date
from pathlib import Path
from typing import Any, NoReturn

from clawmem.engine.config import Settings, default_home, load_settings
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.openclaw.home import OpenClawHome

# Spec §1: a project key containing CR, LF, '<' or '>' makes the whole annotation invalid.
PROJECT_KEY_FORBIDDEN = ("\r", "\n", "<", ">")


class Parser(argparse.ArgumentParser):
    """argparse with a two-line usage error (exit 2) instead of the whole usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n(see `{self.prog} --help`)\n")


# ----------------------------------------------------------------------------- flag-value types


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37] + "...")


def whole_number(flag: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """A type for an integer flag within [low, high]; a bad value is a one-line user error."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} must be a whole number (got {_shown(text)})") from None
        if high is None and value < low:
            raise ClawmemError(f"{flag} must be {low} or more (got {value})")
        if high is not None and not low <= value <= high:
            raise ClawmemError(f"{flag} must be between {low} and {high} (got {value})")
        return value

    return convert


def number(flag: str, low: float, high: float) -> Callable[[str], float]:
    """A type for a decimal flag within [low, high]."""

    def convert(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} must be a number (got {_shown(text)})") from None
        if not low <= value <= high:  # also refuses nan
            raise ClawmemError(f"{flag} must be between {low:g} and {high:g} (got {text.strip()})")
        return value

    return convert


def one_of(flag: str, choices: Sequence[str]) -> Callable[[str], str]:
    """A type for a flag with fixed values (argparse's ``choices`` would make a typo exit 2)."""

    def convert(text: str) -> str:
        value = text.strip()
        if value not in choices:
            raise ClawmemError(f"{flag} must be one of {', '.join(choices)} (got {_shown(text)})")
        return value

    return convert


def choices_metavar(choices: Sequence[str]) -> str:
    return "{" + ",".join(choices) + "}"


def project_key(flag: str = "--project") -> Callable[[str], str]:
    """A type for an active project key: not empty, and valid by the spec's annotation rule."""

    def convert(text: str) -> str:
        value = text.strip()
        if not value:
            raise ClawmemError(f"{flag} needs a project key (got an empty one)")
        if any(ch in value for ch in PROJECT_KEY_FORBIDDEN):
            raise ClawmemError(f"{flag} {_shown(text)}: a project key cannot contain a line break, '<' or '>'")
        return value

    return convert


def add_project_option(parser: argparse.ArgumentParser) -> None:
    """``--project KEY`` (repeatable): the active project keys, validated by :func:`project_key`."""
    parser.add_argument(
        "--project",
        action="append",
        default=[],
        type=project_key("--project"),
        metavar="KEY",
        help="an active project key (repeatable)",
    )


def iso_date(flag: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        try:
            date.fromisoformat(text.strip())
        except ValueError:
            raise ClawmemError(f"{flag} is not a date: {_shown(text)} (use YYYY-MM-DD)") from None
        return text.strip()

    return convert


def non_empty(flag: str, what: str) -> Callable[[str], str]:
    def convert(text: str) -> str:
        if not text.strip():
            raise ClawmemError(f"{flag} needs {what} (got an empty one)")
        return text.strip()

    return convert


def add_global_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", metavar="DIR", help="clawmem home (default ~/.clawmem or $CLAWMEM_HOME)")
    parser.add_argument("--workspace", metavar="DIR", help="the memory workspace (default <home>/workspace)")
    parser.add_argument("--agent", metavar="ID", help="agent id (default main)")
    parser.add_argument("--model", metavar="PATH", help="a GGUF embedding model to use instead of the default")
    parser.add_argument(
        "--openclaw",
        nargs="?",
        const="",
        metavar="HOME",
        help="read an OpenClaw home in place (default ~/.openclaw): its workspace, sessions and index; "
        "nothing of OpenClaw's is written",
    )


def global_parent() -> argparse.ArgumentParser:
    """The global options again, so they also work after the subcommand (``clawmem index --home X``)."""
    parent = argparse.ArgumentParser(add_help=False)
    for flag, meta in (("--home", "DIR"), ("--workspace", "DIR"), ("--agent", "ID"), ("--model", "PATH")):
        parent.add_argument(flag, metavar=meta, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parent.add_argument(
        "--openclaw", nargs="?", const="", metavar="HOME", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    return parent


def settings_from(args: argparse.Namespace, **overrides: Any) -> Settings:
    home = Path(args.home).expanduser() if getattr(args, "home", None) else None
    workspace = Path(args.workspace).expanduser() if getattr(args, "workspace", None) else None
    openclaw = openclaw_home(args)
    if workspace is None and openclaw is not None:
        workspace = openclaw.workspace  # clawmem's own state stays in its home
    return load_settings(
        home=home,
        workspace=workspace,
        agent_id=getattr(args, "agent", None),
        model=getattr(args, "model", None),
        overrides=overrides or None,
    )


def check_home(home: Path) -> None:
    """Refuse a home that is a file or cannot be created, in one line (before anything is opened)."""
    if home.exists() and not home.is_dir():
        raise ClawmemError(f"clawmem home {home} is not a directory (check --home or CLAWMEM_HOME)")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClawmemError(
            f"cannot create the clawmem home {home}: {exc.strerror or exc} (check --home or CLAWMEM_HOME)"
        ) from None


def openclaw_home(args: argparse.Namespace) -> OpenClawHome | None:
    """The OpenClaw home ``--openclaw [HOME]`` names (discovered once per command), or None."""
    given = getattr(args, "openclaw", None)
    if given is None:
        return None
    found: OpenClawHome | None = getattr(args, "_openclaw_home", None)
    if found is None:
        found = OpenClawHome.open(given or None, getattr(args, "agent", None) or "main")
        args._openclaw_home = found
    return found


def engine_from(args: argparse.Namespace, **overrides: Any) -> MemoryEngine:
    settings = settings_from(args, **overrides)
    check_home(settings.home)
    return MemoryEngine(settings, openclaw=openclaw_home(args))


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


def log_exception(args: argparse.Namespace | None) -> Path | None:
    """Append the current traceback to ``<home>/logs/clawmem.log`` (or a temp-dir log when the
    home cannot hold one); None when no log could be written. Never prints the traceback."""
    home = Path(getattr(args, "home", None) or default_home()).expanduser()
    for log in (home / "logs" / "clawmem.log", Path(tempfile.gettempdir()) / "clawmem.log"):
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as fh:
                traceback.print_exc(file=fh)
            return log
        except OSError:
            continue
    return None


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar on a terminal; a no-op when piped or for --json."""
    if not enabled or not sys.stderr.isatty():
        yield lambda phase, done, total: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

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
