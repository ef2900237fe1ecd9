"""kill -9 at every write step (issue "Nothing lost under faults").

Each scenario prepares a workspace and home, runs the command once uninterrupted (the reference
"after"), counts its write steps (fsync, rename, SQLite commit: tests/faults/inject.py), then
for each step N on a fresh copy runs the real CLI and SIGKILLs it just before step N. After each
kill: every Markdown file holds its old bytes or its new bytes (never a mix, never empty), no
temp file is left in the workspace, the database passes ``PRAGMA integrity_check``, the index
serves a search, and running the command again finishes the work (the reference bytes; forget
at 0 residual). CI runs a seeded sample of the steps; ``make soak`` (CLAWMEM_SOAK=1) all of them.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import apsw
import pytest
from clawmem.engine.workspace.writes import TEMP_SUFFIX

from tests.conftest import FIXTURES, NOW
from tests.engine.test_dreaming import DREAM_AT, QUERIES, write_fact
from tests.session_fixture import B_FACT, LINGYIN, B

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "CLAWMEM_NOW": NOW, "CLAWMEM_TZ": "UTC", "CLAWMEM_THREADS": "1"}
SOAK = os.environ.get("CLAWMEM_SOAK") == "1"
SAMPLE = 5  # steps per scenario in CI (seeded, ~50 s in all); all of them under make soak
REPORT: dict[str, dict[str, int]] = {}


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


SCENARIOS = [
    Scenario("index --force", _keyword_home, ["index", "--force"]),
    Scenario("session flush", _with_session, ["session", "flush", B, "--text", B_FACT], rerun_if_done=False),
    Scenario("forget", _with_flushed_session, ["forget", "--session", B, "--yes"]),
    Scenario("dream --apply", _recalled_fact, ["dream", "--apply"], now=DREAM_AT, finished=("MEMORY.md",)),
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


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kill_at_every_write_step_loses_nothing(scenario: Scenario, tmp_path: Path) -> None:
    base = tmp_path / "before"
    shutil.copytree(FIXTURES / "workspace", base / "ws")
    scenario.prepare(base / "home", base / "ws")
    before = markdown(base / "ws")

    ref = tmp_path / "reference"
    shutil.copytree(base, ref)
    count = tmp_path / "steps"
    assert run_killed(ref / "home", ref / "ws", scenario.command, 0, scenario.now, count_to=count) == 0
    after = markdown(ref / "ws")
    assert after != before or scenario.name == "index --force", "the command wrote nothing"
    steps = int(count.read_text())
    assert steps > 0
    chosen = (
        range(1, steps + 1)
        if SOAK
        else sorted(random.Random(f"kill9-{scenario.name}").sample(range(1, steps + 1), min(SAMPLE, steps)))
    )

    killed = recovered = 0
    for n in chosen:
        run = tmp_path / f"kill-{n}"
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(base, run)
        home, ws = run / "home", run / "ws"
        code = run_killed(home, ws, scenario.command, n, scenario.now)
        assert code in (-9, 0), f"step {n}: exit {code}"
        killed += code == -9
        # Every Markdown file is whole: its old bytes or its new ones. A temp file the kill left
        # (killed between its creation and its rename) is no Markdown file: the next write in its
        # folder removes it, which the re-run below checks.
        now = {rel: data for rel, data in markdown(ws).items() if not rel.endswith(TEMP_SUFFIX)}
        assert set(now) <= set(before) | set(after), f"step {n}: stray files {set(now) - set(before) - set(after)}"
        for rel, data in now.items():
            assert data in (before.get(rel), after.get(rel)), f"step {n}: {rel} is neither its old nor its new bytes"
        conn = apsw.Connection(str(database(home)))
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)], f"step {n}"
        conn.close()
        found = json.loads(cli(home, ws, "search", "湖景房", "--json", "--no-record").stdout)
        assert found["results"], f"step {n}: the index serves no search"
        # Running the command again finishes the work.
        if scenario.rerun_if_done or now != after:
            out = cli(home, ws, *scenario.command, now=scenario.now).stdout
            if scenario.name == "forget":
                assert "0 residual" in out, out
        final = markdown(ws)
        assert not [rel for rel in final if rel.endswith(TEMP_SUFFIX)], f"step {n}: a temp file outlived the re-run"
        for rel in scenario.finished or tuple(set(final) | set(after)):
            assert final.get(rel) == after.get(rel), f"step {n}: the re-run did not finish {rel}"
        recovered += 1
    REPORT[scenario.name] = {"steps": steps, "tried": len(chosen), "killed": killed, "recovered": recovered}
    print(f"\n{scenario.name}: {steps} write steps, {len(chosen)} tried, {killed} killed, {recovered} recovered")
    assert recovered == len(chosen)
