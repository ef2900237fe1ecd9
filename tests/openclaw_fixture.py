"""The OpenClaw home fixture (tests/fixtures/openclaw-home/, made by OpenClaw 2026.9.6) and the
pytest fixtures built on it: a copy in the test's tmp_path, a digest of every file under it, and
another process holding a write transaction open on the agent database (a running gateway).

The conftest.py of tests/engine and tests/cli import the fixtures from here.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest

from tests.conftest import FIXTURES

SOURCE = FIXTURES / "openclaw-home"
LIN = "agent:main:telegram:direct:1001"
SAM = "agent:main:telegram:direct:1002"
CLI = "agent:main:cli-review"
EVENTS = {LIN: 26, SAM: 17, CLI: 15}
INDEXED = (
    "MEMORY.md",
    "USER.md",
    "memory/2026-11-20.md",
    "memory/2026-11-21.md",
    "memory/2026-11-27.md",
    "memory/2026-12-05.md",
)


def state(home: Path) -> Path:
    return home / ".openclaw"


def agent_db(home: Path) -> Path:
    return state(home) / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


def state_db(home: Path) -> Path:
    return state(home) / "state" / "openclaw.sqlite"


def digest(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (the file list is its keys)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def alter(db: Path, *statements: str) -> None:
    """Change a test's copy of a database (the test's own doing, never clawmem's)."""
    conn = apsw.Connection(str(db))
    for sql in statements:
        conn.execute(sql)
    conn.close()


@pytest.fixture
def openclaw_home(tmp_path: Path) -> Path:
    """A copy of the fixture home (OpenClaw's HOME; its state dir is ``.openclaw``)."""
    target = tmp_path / "openclaw-home"
    shutil.copytree(SOURCE, target)
    return target


_WRITER = """
import sys, apsw
conn = apsw.Connection(sys.argv[1])
conn.setbusytimeout(5000)
conn.execute("PRAGMA wal_autocheckpoint=0")
conn.execute("UPDATE memory_index_sources SET hash = '' WHERE path = 'memory/2026-11-20.md'")
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE memory_index_sources SET hash = 'pending' WHERE path = 'MEMORY.md'")
print("ready", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
conn.close()
"""


@contextmanager
def _writer(db: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.communicate("\n", timeout=30)


@pytest.fixture
def openclaw_writer() -> Callable[[Path], object]:
    """``with openclaw_writer(db):`` another process, like a running gateway, has committed a
    change to ``memory/2026-11-20.md``'s source row into the WAL (not checkpointed: its hash is
    now ``''``, which OpenClaw reads as "reindex") and holds a write transaction open."""
    return _writer
