"""What the fuzzers share: a keyword-only indexed workspace, ``clawmem`` run in-process, the
workspace's bytes, and one MCP server with its SDK client kept open across examples.

A subprocess per example costs about a second of start-up; ``main(argv)`` in-process costs
milliseconds, so each target can try many inputs within the CI budget. Targets that search or
serve build their home, index or server once per test module: read-only targets compare the
workspace's bytes after every example, targets that write restore it from a snapshot. Targets
that vary the home or the files themselves get a fresh place per example (``fresh_place``:
hypothesis reuses a test function's fixtures across examples, so it is made inside the test).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from clawmem.engine.config import load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.mcp_server.door import MemoryDoor
from clawmem.mcp_server.server import build_server
from clawmem.program.main import main
from mcp import Client

from tests.cli.one_line import one_line_error
from tests.conftest import FIXTURES

KEYWORD_ONLY = '[embedding]\nprovider = "none"\n'


def keyword_workspace(base: Path) -> tuple[Path, Path]:
    """(home, workspace): a copy of the fixture workspace under a home with no embedding model."""
    home = base / "home"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(KEYWORD_ONLY, encoding="utf-8")
    workspace = base / "workspace"
    shutil.copytree(FIXTURES / "workspace", workspace, symlinks=True)
    return home, workspace


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run_cli(home: Path, workspace: Path, argv: Sequence[str]) -> Run:
    """``clawmem --home H --workspace W ARGV`` in-process. stdout is strict UTF-8, as a real
    terminal's is, so text that cannot be printed fails here as it would for a user."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--home", str(home), "--workspace", str(workspace), *argv])
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        out.flush()
        err.flush()
    return Run(code, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8"))


@dataclass(frozen=True)
class Place:
    """A home and a workspace of one example."""

    home: Path
    workspace: Path

    def run(self, *argv: str, operand: str | None = None) -> Run:
        """``clawmem ARGV --home H --workspace W [-- OPERAND]`` in this process; never a crash nor
        an internal error, and exit 1 comes with one line. ``operand`` may start with ``-``."""
        out, err = _terminal_stream(), _terminal_stream()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            tail = ["--", operand] if operand is not None else []
            code = main([*argv, "--home", str(self.home), "--workspace", str(self.workspace), *tail])
        ran = Run(code, _text(out), _text(err))
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


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry below ``root``: a file's bytes, a symlink's target, a directory as "dir"."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = "link:" + str(p.readlink())
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = p.read_bytes()
    return out


def restore(root: Path, snap: dict[str, bytes | str]) -> None:
    """Put back the files of ``snap`` that changed and remove files it does not hold (plain files
    and directories only: the write tools make nothing else)."""
    for p in sorted(root.rglob("*"), reverse=True):
        rel = p.relative_to(root).as_posix()
        if rel not in snap:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
    for rel, value in snap.items():
        if isinstance(value, bytes) and (root / rel).read_bytes() != value:
            (root / rel).write_bytes(value)


def indexed_engine(home: Path, workspace: Path) -> MemoryEngine:
    engine = MemoryEngine(load_settings(home=home, workspace=workspace))
    engine.sync()
    return engine


class ServerSession:
    """One in-process MCP server (``build_server`` over a :class:`MemoryDoor`) and the SDK's own
    client connected to it, driven from synchronous tests through an anyio blocking portal."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.door = MemoryDoor(indexed_engine(home, workspace), watch=False)
        server = build_server(self.door)
        self.door.start()
        self.door.ready.wait(60)
        self._stack = contextlib.ExitStack()
        self.portal: BlockingPortal = self._stack.enter_context(start_blocking_portal())
        self.client: Client = self._stack.enter_context(self.portal.wrap_async_context_manager(Client(server)))

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments)

    def tools(self) -> list[Any]:
        return list(self.portal.call(self.client.list_tools).tools)

    def close(self) -> None:
        self._stack.close()
        self.door.close()


def tool_error_line(result: Any) -> str:
    """An MCP error result's message, checked: one short line, no traceback, no internal error."""
    assert result.is_error
    text = "".join(str(getattr(c, "text", "")) for c in result.content)
    assert text, result
    assert "\n" not in text and "Traceback" not in text, text
    assert "internal error" not in text, text
    assert len(text) <= 600, text[:200]
    return text
