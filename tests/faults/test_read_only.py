"""A read-only workspace and a read-only home (issue "Nothing lost under faults"): real read-only
mounts (tests/faults/read_only.py), not injected errors.

Read-only workspace: every writer — the CLI's, the MCP server's ``memory_append`` and the app's
editor save (the harness's scenarios) — refuses with one line naming the file it could not write
and exit 1; every file keeps its bytes and no temp file is left; the reading commands and search
keep working, and so does the index (it lives in the home). A session import with ``--note``
imports the session (the home is writable) and warns in one line that the note was not written.

Read-only home: the database cannot be written. Reading commands and search work from it as it
is (a search then records no recall signal, and says so); a command that must write the database
refuses in one line naming it; the workspace is not touched.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.one_line import one_line_error
from tests.conftest import FIXTURES
from tests.faults import read_only
from tests.faults.scenarios import CLAWMEM, ENV, SCENARIOS, Scenario, database, markdown

pytestmark = pytest.mark.skipif(read_only.available() is not None, reason=str(read_only.available()))

WRITERS = [s for s in SCENARIOS if s.writes_markdown]


def _ro(folder: Path, home: Path, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI with ``folder`` read-only."""
    cmd = [*read_only.wrap(folder), CLAWMEM, "--home", str(home), "--workspace", str(ws), *args]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True)


def _reading_works(folder: Path, home: Path, ws: Path) -> None:
    """Search, get, status and context answer with ``folder`` read-only."""
    found = _ro(folder, home, ws, "search", "湖景房", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"]
    for args in (("get", "MEMORY.md"), ("status",), ("context",), ("session", "list")):
        p = _ro(folder, home, ws, *args)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (args, p.stderr)


def _prepared(scenario: Scenario, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    shutil.copytree(FIXTURES / "workspace", tmp_path / "ws")
    scenario.prepare(tmp_path / "home", tmp_path / "ws")
    return tmp_path / "home", tmp_path / "ws", scenario.args(tmp_path / "home", tmp_path / "ws")


@pytest.mark.parametrize("scenario", WRITERS, ids=[s.name for s in WRITERS])
def test_a_writer_on_a_read_only_workspace_refuses_in_one_line_and_keeps_every_file(
    scenario: Scenario, tmp_path: Path
) -> None:
    home, ws, command = _prepared(scenario, tmp_path)
    before = markdown(ws)
    p = scenario.run(home, ws, command, wrap=read_only.wrap(ws))
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    if scenario.name == "session import --note":  # the session is imported (in the home); the note warns
        assert p.returncode == 0 and p.stderr.startswith("clawmem: warning: "), p.stderr
        line = p.stderr.strip()
    else:
        assert p.returncode == 1, (p.returncode, p.stderr)
        line = one_line_error(p.stderr) if scenario.entry is None and scenario.mcp_call is None else p.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert re.search(r"cannot write \S+\.md: Read-only file system", line), line  # names the file
    assert markdown(ws) == before  # every byte kept, no temp file, nothing created
    _reading_works(ws, home, ws)


def test_the_index_works_beside_a_read_only_workspace(tmp_path: Path) -> None:
    """The index lives in the home: a read-only workspace is indexed and searched as usual."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", ws)
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    before = markdown(ws)
    p = _ro(ws, home, ws, "index")
    assert p.returncode == 0, p.stderr
    assert markdown(ws) == before
    _reading_works(ws, home, ws)


@pytest.mark.parametrize(
    "args",
    [
        ("index", "--force"),
        ("session", "import", str(FIXTURES / "sessions" / "lingyin-tickets.jsonl")),
        ("supersede", "MEMORY.md:10", "--by", "MEMORY.md:12"),
        ("dream", "--apply"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_writer_with_a_read_only_home_refuses_in_one_line_and_touches_no_file(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", ws)
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    assert subprocess.run([CLAWMEM, "--home", str(home), "--workspace", str(ws), "index"], env=ENV).returncode == 0
    before, db = markdown(ws), database(home).read_bytes()
    p = _ro(home, home, ws, *args)
    assert p.returncode == 1, p.stderr
    line = one_line_error(p.stderr)
    assert "read-only" in line.lower(), line
    assert markdown(ws) == before and database(home).read_bytes() == db
    _reading_works(home, home, ws)
    # the person is told: status names it, a search says it searched the index as it is
    assert "(read-only: on a read-only file system)" in _ro(home, home, ws, "status").stdout
    found = _ro(home, home, ws, "search", "湖景房")
    assert "searched the index as it is" in found.stderr and "not recorded" in found.stderr, found.stderr
    assert database(home).read_bytes() == db
