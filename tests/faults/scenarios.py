"""The fault harness's scenarios: each prepares a home and workspace, then names the CLI command
whose write steps tests/faults/inject.py fails one by one (kill -9 in test_kill9.py, a full disk
in test_disk_full.py), and the helpers both use to run it and to read what it left."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import NOW
from tests.dreaming_fixture import DREAM_AT, QUERIES, write_fact
from tests.session_fixture import B_FACT, LINGYIN, B

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "CLAWMEM_NOW": NOW, "CLAWMEM_TZ": "UTC", "CLAWMEM_THREADS": "1"}


@dataclass(frozen=True)
class Scenario:
    name: str
    prepare: Callable[[Path, Path], None]  # (home, workspace) → the state before the command
    command: list[str]
    rerun_if_done: bool = True  # False: an append that landed must not be run twice
    now: str = NOW  # the clock the command runs at
    # the files a re-run must leave exactly as the uninterrupted run did (None: every file). A
    # Dreaming re-run is a new cycle: its DREAMS.md diary tells what *that* run did (the killed run
    # may have staged the Light candidates already), so there only MEMORY.md must match.
    finished: tuple[str, ...] | None = None
    writes_markdown: bool = True  # False: the command writes only the database (the index)


def cli(home: Path, ws: Path, *args: str, check: bool = True, now: str = NOW) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "CLAWMEM_NOW": now}
    p = subprocess.run(
        [CLAWMEM, "--home", str(home), "--workspace", str(ws), *args], env=env, capture_output=True, text=True
    )
    if check:
        assert p.returncode == 0, p.stderr
    return p


def _keyword_home(home: Path, ws: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    cli(home, ws, "index")


def _with_session(home: Path, ws: Path) -> None:
    _keyword_home(home, ws)
    cli(home, ws, "session", "import", str(LINGYIN))


def _with_flushed_session(home: Path, ws: Path) -> None:
    """The session's line flushed into a diary that holds other lines: forget rewrites that file
    (a diary holding only the session's lines is deleted, which has no half-written state)."""
    _with_session(home, ws)
    cli(home, ws, "session", "flush", B, "--text", B_FACT, "--date", "2026-11-04")


def _recalled_fact(home: Path, ws: Path) -> None:
    """A diary fact three searches recalled on three days: Dreaming's Deep phase promotes it."""
    _keyword_home(home, ws)
    write_fact(ws)
    for when, query in QUERIES:
        cli(home, ws, "search", query, now=when)


def _edited_after_index(home: Path, ws: Path) -> None:
    """An edit made after the last index: the incremental index re-indexes that file."""
    _keyword_home(home, ws)
    with (ws / "MEMORY.md").open("a", encoding="utf-8") as fh:
        fh.write("- The staging database moved to the new cluster in November.\n")


def _superseded(home: Path, ws: Path) -> None:
    """MEMORY.md's deploy-day entry marked superseded by the on-call one (what --undo takes back)."""
    _keyword_home(home, ws)
    cli(home, ws, "supersede", "MEMORY.md:10", "--by", "MEMORY.md:12")


SCENARIOS = [
    Scenario("index --force", _keyword_home, ["index", "--force"], writes_markdown=False),
    Scenario("session flush", _with_session, ["session", "flush", B, "--text", B_FACT], rerun_if_done=False),
    Scenario("forget", _with_flushed_session, ["forget", "--session", B, "--yes"]),
    Scenario("dream --apply", _recalled_fact, ["dream", "--apply"], now=DREAM_AT, finished=("MEMORY.md",)),
    Scenario("index (after an edit)", _edited_after_index, ["index"], writes_markdown=False),
    # a supersede that landed is not run twice (a second one is refused: the entry is superseded)
    Scenario("supersede", _keyword_home, ["supersede", "MEMORY.md:10", "--by", "MEMORY.md:12"], rerun_if_done=False),
    Scenario("supersede --undo", _superseded, ["supersede", "MEMORY.md:11", "--undo"], rerun_if_done=False),
]


def markdown(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


def database(home: Path) -> Path:
    return home / "agents" / "main" / "agent" / "clawmem-agent.sqlite"


def inject(
    home: Path, ws: Path, command: list[str], at: int, now: str, *, fault: str = "kill", count_to: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI under tests/faults/inject.py: failed at its ``at``-th step (0: counted into ``count_to``)."""
    env = {**ENV, "CLAWMEM_NOW": now, "CLAWMEM_FAULT": fault}
    if count_to:
        env["CLAWMEM_FAULT_COUNT"] = str(count_to)
    args = [sys.executable, "-m", "tests.faults.inject", str(at), "--home", str(home), "--workspace", str(ws)]
    return subprocess.run([*args, *command], env=env, cwd=ROOT, capture_output=True, text=True)


def run_killed(home: Path, ws: Path, command: list[str], kill_at: int, now: str, count_to: Path | None = None) -> int:
    return inject(home, ws, command, kill_at, now, count_to=count_to).returncode
