"""Several clawmem processes on one PostgreSQL (issue 39): two MCP servers with different homes,
one of them on a machine without the files, and the CLI with ``--store-url``; real subprocesses,
real PostgreSQL with pgvector (tests/postgres/conftest.py), keyword-only (what is shared is the index)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.mcp.conftest import CLAWMEM, ENV, TODAY, stdio_client, structured


def shared_home(home: Path, url: str, schema: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[embedding]\nprovider = "none"\n[store]\nurl = "{url}"\nschema = "{schema}"\n', encoding="utf-8"
    )
    return home


async def test_one_server_appends_and_a_server_on_another_machine_finds_it(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    home_a = shared_home(tmp_path / "a", pg_url, pg_schema)
    home_b = shared_home(tmp_path / "b", pg_url, pg_schema)  # its own database, and no copy of the files
    async with stdio_client(home_a, workspace) as a, stdio_client(home_b, tmp_path / "no-files-here") as b:
        before = structured(await b.call_tool("memory_search", {"query": "Saoirse"}))
        assert not any("Saoirse" in h["snippet"] for h in before["results"])
        out = structured(await a.call_tool("memory_append", {"text": "- Our sailing boat is named Saoirse."}))
        assert out["path"] == f"memory/{TODAY}.md"
        found = structured(await b.call_tool("memory_search", {"query": "Saoirse"}))
        assert [h["citation"].split("#")[0] for h in found["results"]][:1] == [f"memory/{TODAY}.md"]
        assert "Saoirse" in found["results"][0]["snippet"]
        refused = await b.call_tool("memory_append", {"text": "- from the laptop"})
        assert refused.is_error  # no files on this machine: it says so instead of writing elsewhere


def test_the_cli_indexes_with_the_flag_and_searches_from_a_home_without_files(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    home_a = shared_home(tmp_path / "a", pg_url, pg_schema)
    (home_a / "config.toml").write_text(
        f'[embedding]\nprovider = "none"\n[store]\nschema = "{pg_schema}"\n', encoding="utf-8"
    )  # the URL comes from the flag this time

    def clawmem(home: Path, ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CLAWMEM, "--home", str(home), "--workspace", str(ws), *args],
            capture_output=True,
            text=True,
            env={**ENV, "PATH": "/usr/bin:/bin"},
            timeout=120,
        )

    index = clawmem(home_a, workspace, "index", "--store-url", pg_url, "--json")
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["shared"]["replacedFiles"] > 0
    home_b = shared_home(tmp_path / "b", pg_url, pg_schema)
    search = clawmem(home_b, tmp_path / "nothing", "search", "billing migration", "--json")
    assert search.returncode == 0, search.stderr
    body = json.loads(search.stdout)
    assert body["keywordRanking"] == "PostgreSQL ts_rank_cd" and body["results"]
    status = clawmem(home_b, tmp_path / "nothing", "status")
    assert "Shared index" in status.stdout and f"schema {pg_schema}" in status.stdout

    bad = clawmem(home_a, workspace, "index", "--store-url", "postgresql://who:pw@127.0.0.1:9/none")
    assert bad.returncode != 0
    assert bad.stderr.strip().count("\n") == 0 and "cannot reach PostgreSQL at who@127.0.0.1:9/none" in bad.stderr
    assert "pw" not in bad.stderr.replace("who@", "")
