"""What a front end says on stderr: one-line errors and warnings, and the crash log that keeps the
traceback a user never sees."""

from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from pathlib import Path

from clawmem.engine.config import default_home


def one_line(message: str) -> str:
    """``message`` with its control and separator characters escaped (``\\n``, ``\\x1e``): a path
    or query echoed back can never break the message over lines or drive the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in message)


def fail(message: str) -> None:
    print(f"clawmem: error: {one_line(message)}", file=sys.stderr)


def warn(message: str) -> None:
    print(f"clawmem: warning: {one_line(message)}", file=sys.stderr)


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
