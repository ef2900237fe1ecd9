"""Run ``clawmem`` in-process for the fuzzers, and the checks every target makes.

A subprocess per example costs about a second of start-up; ``main(argv)`` in-process costs
milliseconds, so each target can try many inputs within the CI budget. Each example gets its own
home and workspace (hypothesis reuses a test function's fixtures across examples, so they are
made inside the test).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clawmem.program.main import main

from tests.cli.one_line import one_line_error
from tests.conftest import FIXTURES

KEYWORD_ONLY = '[embedding]\nprovider = "none"\n'


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


@dataclass(frozen=True)
class Place:
    home: Path
    workspace: Path

    def run(self, *argv: str, operand: str | None = None) -> Ran:
        """``clawmem ARGV --home H --workspace W [-- OPERAND]`` in this process; never a crash nor
        an internal error, and exit 1 comes with one line. ``operand`` may start with ``-``."""
        out, err = _terminal_stream(), _terminal_stream()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            tail = ["--", operand] if operand is not None else []
            code = main([*argv, "--home", str(self.home), "--workspace", str(self.workspace), *tail])
        ran = Ran(code, _text(out), _text(err))
        assert "Traceback" not in ran.err, (argv, ran.err)
        assert "internal error" not in ran.err, (argv, ran.err)
        assert ran.code in (0, 1), (argv, ran)
        if ran.code == 1:
            one_line_error(ran.err)
        return ran


def _terminal_stream() -> io.TextIOWrapper:
    """A stream that encodes like a real UTF-8 stdout (strict: a lone surrogate raises)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


@contextlib.contextmanager
def fresh_place(config: str | bytes = KEYWORD_ONLY, workspace: str = "workspace") -> Iterator[Place]:
    """A temporary home (with ``config``) and a copy of ``tests/fixtures/<workspace>``."""
    with tempfile.TemporaryDirectory(prefix="clawmem-fuzz-") as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        raw = config.encode("utf-8") if isinstance(config, str) else config
        (home / "config.toml").write_bytes(raw)
        ws = root / "workspace"
        shutil.copytree(FIXTURES / workspace, ws, symlinks=True)
        yield Place(home, ws)


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file under ``root`` by relative path with its bytes (None for a directory)."""
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes()) for p in sorted(root.rglob("*"))}
