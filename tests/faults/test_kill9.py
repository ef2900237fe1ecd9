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
from pathlib import Path

import apsw
import pytest
from clawmem.engine.workspace.writes import TEMP_SUFFIX

from tests.conftest import FIXTURES
from tests.faults.scenarios import SCENARIOS, Scenario, cli, database, markdown

SOAK = os.environ.get("CLAWMEM_SOAK") == "1"
SAMPLE = 5  # steps per scenario in CI (seeded, ~50 s in all); all of them under make soak
REPORT: dict[str, dict[str, int]] = {}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kill_at_every_write_step_loses_nothing(scenario: Scenario, tmp_path: Path) -> None:
    base = tmp_path / "before"
    shutil.copytree(FIXTURES / "workspace", base / "ws")
    scenario.prepare(base / "home", base / "ws")
    before = markdown(base / "ws")
    command = scenario.args(base / "home", base / "ws")

    ref = tmp_path / "reference"
    shutil.copytree(base, ref)
    count = tmp_path / "steps"
    p = scenario.run(ref / "home", ref / "ws", command, count_to=count)
    assert p.returncode == 0, p.stderr
    after = markdown(ref / "ws")
    assert after != before or not scenario.writes_markdown, "the command wrote nothing"
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
        code = scenario.run(home, ws, command, n).returncode
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
            again = scenario.run(home, ws, command)
            assert again.returncode == 0, f"step {n}: the re-run failed: {again.stderr}"
            if scenario.name == "forget":
                assert "0 residual" in again.stdout, again.stdout
        final = markdown(ws)
        assert not [rel for rel in final if rel.endswith(TEMP_SUFFIX)], f"step {n}: a temp file outlived the re-run"
        for rel in scenario.finished or tuple(set(final) | set(after)):
            assert final.get(rel) == after.get(rel), f"step {n}: the re-run did not finish {rel}"
        recovered += 1
    REPORT[scenario.name] = {"steps": steps, "tried": len(chosen), "killed": killed, "recovered": recovered}
    print(f"\n{scenario.name}: {steps} write steps, {len(chosen)} tried, {killed} killed, {recovered} recovered")
    assert recovered == len(chosen)
