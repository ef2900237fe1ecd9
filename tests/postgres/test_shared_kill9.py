"""kill -9 of an index run at every commit it makes on the shared PostgreSQL index (issue 39).

The machine with the files indexes after an edit (a diary changed, one deleted, one added),
incrementally and as a full rebuild, under tests/faults/inject.py with
``CLAWMEM_FAULT_STEPS=postgresql``: each PostgreSQL commit is a step, and the process SIGKILLs
itself just before step N. After each kill a machine without the files still gets answers, and
the shared index is one whole index, the one before the run or the one after it (its files and
their hashes, and the state row's counts, which searches key on): the server rolled back the
unfinished transaction. Running the command again publishes the whole new index.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.faults.scenarios import Scenario, cli

INDEX = Scenario("index", lambda home, ws: None, ["index"], writes_markdown=False)
REBUILD = Scenario("index --force", lambda home, ws: None, ["index", "--force"], writes_markdown=False)


def _home(run: Path, url: str) -> tuple[Path, Path, str]:
    """A machine with the fixture's files, indexed and published to a schema of its own, then
    edited: (home, workspace, schema)."""
    schema = f"k_{uuid.uuid4().hex[:12]}"
    ws = Path(shutil.copytree(FIXTURES / "workspace", run / "ws"))
    home = run / "home"
    home.mkdir(parents=True)
    config = f'[embedding]\nprovider = "none"\n\n[store]\nurl = "{url}"\nschema = "{schema}"\n'
    (home / "config.toml").write_text(config, encoding="utf-8")
    cli(home, ws, "index")
    diaries = sorted((ws / "memory").glob("2026-*.md"))
    diaries[0].write_text(diaries[0].read_text(encoding="utf-8") + "\n- The kayak club meets on Thursdays.\n")
    diaries[1].unlink()
    (ws / "memory" / "2026-11-20.md").write_text("# 2026-11-20\n\n- Booked the lake view room again.\n")
    return home, ws, schema


def _shared(pg_conn: Any, schema: str) -> tuple[dict[str, str], tuple[int, int], tuple[int, int]]:
    """(path -> hash of every file, (chunks, files) counted, (chunks, files) in the state row)."""
    pg_conn.execute(f'SET search_path TO "{schema}", public')
    files = {str(p): str(h) for p, h in pg_conn.execute("SELECT path, hash FROM memory_index_sources").fetchall()}
    counted = pg_conn.execute(
        "SELECT (SELECT count(*) FROM memory_index_chunks), (SELECT count(*) FROM memory_index_sources)"
    ).fetchone()
    state = pg_conn.execute("SELECT chunks, sources FROM memory_index_state WHERE id = 1").fetchone()
    pg_conn.rollback()
    return files, (int(counted[0]), int(counted[1])), (int(state[0]), int(state[1]))


def _drop(pg_conn: Any, schema: str) -> None:
    pg_conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    pg_conn.commit()


@pytest.mark.parametrize("scenario", [INDEX, REBUILD], ids=["index", "index --force"])
def test_a_publish_killed_at_any_commit_leaves_the_old_index_whole_and_answering(
    scenario: Scenario, tmp_path: Path, pg_url: str, pg_conn: Any
) -> None:
    env = {"CLAWMEM_FAULT_STEPS": "postgresql"}
    ref_home, ref_ws, ref_schema = _home(tmp_path / "reference", pg_url)
    before, _, _ = _shared(pg_conn, ref_schema)
    count = tmp_path / "steps"
    done = scenario.run(ref_home, ref_ws, scenario.args(ref_home, ref_ws), count_to=count, env=env)
    assert done.returncode == 0, done.stderr
    after, counted, state = _shared(pg_conn, ref_schema)
    assert after != before and counted == state
    _drop(pg_conn, ref_schema)
    steps = int(count.read_text())
    assert steps >= 2  # at least the schema check and the publish itself

    killed = 0
    for n in range(1, steps + 1):
        home, ws, schema = _home(tmp_path / f"kill-{n}", pg_url)
        code = scenario.run(home, ws, scenario.args(home, ws), n, env=env).returncode
        assert code in (-9, 0), f"step {n}: exit {code}"
        killed += code == -9
        files, counted, state = _shared(pg_conn, schema)
        assert files in (before, after), f"step {n}: the shared index is neither the old one nor the new one"
        assert counted == state, f"step {n}: the state row's counts are not the index's"
        if n == steps:  # killed just before the publish's own commit: everything it wrote is rolled back
            assert files == before, "the publish's unfinished transaction was not rolled back"
        laptop = tmp_path / f"laptop-{n}"
        laptop.mkdir()
        (laptop / "config.toml").write_text((home / "config.toml").read_text(encoding="utf-8"), encoding="utf-8")
        found = json.loads(cli(laptop, tmp_path / "no-files", "search", "湖景房", "--json", "--no-record").stdout)
        assert found["results"], f"step {n}: the shared index serves no search"
        assert scenario.run(home, ws, scenario.args(home, ws)).returncode == 0, f"step {n}: the re-run failed"
        assert _shared(pg_conn, schema)[0] == after, f"step {n}: the re-run did not publish the new index"
        _drop(pg_conn, schema)
    print(f"\n{scenario.name}: {steps} commits on PostgreSQL, {killed} killed, every one recovered")
    assert killed == steps
