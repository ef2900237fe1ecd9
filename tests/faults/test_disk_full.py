"""A full disk at every fsync (issue "Nothing lost under faults"): the command fails with one
line naming the problem and a non-zero exit, never a traceback (where the real change is done
and only its record cannot be written — a session's optional note, DREAMS.md's entry for an
approve or a revert — it warns in one line naming that file instead, and nothing else is left); every Markdown file keeps its
old bytes (or, when the disk filled after the rename, its complete new ones), no temp file is
left behind, the database passes ``PRAGMA integrity_check``, and once there is space the same
command finishes the work. The full disk is injected at
the fsync call (tests/faults/inject.py says why a real one is not used)."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from tests.conftest import FIXTURES
from tests.faults.scenarios import SCENARIOS, Scenario, database, markdown

# The commands that write Markdown (the index writes only SQLite, which syncs in C).
WRITERS = [s for s in SCENARIOS if s.writes_markdown]


@pytest.mark.parametrize("scenario", WRITERS, ids=[s.name for s in WRITERS])
def test_a_full_disk_at_every_fsync_fails_in_one_line_and_keeps_every_file(scenario: Scenario, tmp_path: Path) -> None:
    base = tmp_path / "before"
    shutil.copytree(FIXTURES / "workspace", base / "ws")
    scenario.prepare(base / "home", base / "ws")
    before = markdown(base / "ws")
    command = scenario.args(base / "home", base / "ws")
    ref = tmp_path / "reference"  # the uninterrupted run, counting its fsyncs
    shutil.copytree(base, ref)
    count = tmp_path / "fsyncs"
    p = scenario.run(ref / "home", ref / "ws", command, fault="enospc", count_to=count)
    assert p.returncode == 0, p.stderr
    after = markdown(ref / "ws")
    fsyncs = int(count.read_text())
    assert fsyncs > 0
    failed = 0
    for n in range(1, fsyncs + 1):
        run = tmp_path / f"full-{n}"
        shutil.copytree(base, run)
        p = scenario.run(run / "home", run / "ws", command, n, fault="enospc")
        # an optional part refused, the rest done: a session imported without the note asked for
        warned = p.returncode == 0 and "No space left on device" in p.stderr
        if p.returncode != 0 or warned:
            failed += 1
            assert p.returncode in (0, 1), f"fsync {n}: exit {p.returncode}"
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in p.stderr, f"fsync {n}: {p.stderr}"
            # the CLI's one-line error (or warning); the MCP tool's error result; the app's notification
            prefix = "clawmem: warning: " if warned else "clawmem: error: "
            prefix = prefix if scenario.entry is None and scenario.mcp_call is None else ""
            assert lines[0].startswith(prefix) and "cannot write " in lines[0], lines[0]
            assert "No space left on device" in lines[0], lines[0]
        now = markdown(run / "ws")
        for rel, data in now.items():
            assert data in (before.get(rel), after.get(rel)), f"fsync {n}: {rel} is neither its old nor its new bytes"
        assert set(now) <= set(before) | set(after), f"fsync {n}: left {set(now) - set(before) - set(after)}"
        conn = apsw.Connection(str(database(run / "home")))
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)], f"fsync {n}"
        conn.close()
        if warned:  # done but for what the warning names (a note, DREAMS.md's entry): nothing else
            unfinished = [rel for rel in set(now) | set(after) if now.get(rel) != after.get(rel)]
            assert all(Path(rel).name in lines[0] for rel in unfinished), (unfinished, lines[0])
        elif p.returncode != 0 and (scenario.rerun_if_done or now != after):  # space again: it finishes
            again = scenario.run(run / "home", run / "ws", command)
            assert again.returncode == 0, f"fsync {n}: the re-run failed: {again.stderr}"
            final = markdown(run / "ws")
            for rel in scenario.finished or tuple(set(final) | set(after)):
                assert final.get(rel) == after.get(rel), f"fsync {n}: the re-run did not finish {rel}"
    assert failed >= 1  # the temp file's own fsync fails: at least that write is refused
    print(f"\n{scenario.name}: {fsyncs} fsyncs, {failed} failed in one line; last: {lines[0]}")
