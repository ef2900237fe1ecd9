"""The fault harness's scenarios: each prepares a home and workspace, then names the command whose
write steps tests/faults/inject.py fails one by one (kill -9 in test_kill9.py, a full disk in
test_disk_full.py), and the helpers both use to run it and to read what it left.

A command is the real CLI's, with three other writers run the same way: the MCP server (``clawmem
mcp`` on stdio, sent one ``tools/call`` as JSON-RPC lines, as a host sends it), and the app's
editor save (the real app under Pilot in the killed process: tests/faults/app_save.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import NOW
from tests.dreaming_fixture import DREAM_AT, QUERIES, write_fact
from tests.session_fixture import B_FACT, LINGYIN, B

Command = list[str] | Callable[[Path, Path], list[str]]  # a list, or made from the prepared state

CLAWMEM = str(Path(sys.executable).with_name("clawmem"))
ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "CLAWMEM_NOW": NOW, "CLAWMEM_TZ": "UTC", "CLAWMEM_THREADS": "1"}


@dataclass(frozen=True)
class Scenario:
    name: str
    prepare: Callable[[Path, Path], None]  # (home, workspace) → the state before the command
    command: Command
    rerun_if_done: bool = True  # False: an append that landed must not be run twice
    now: str = NOW  # the clock the command runs at
    # the files a re-run must leave exactly as the uninterrupted run did (None: every file). A
    # Dreaming re-run is a new cycle: its DREAMS.md diary tells what *that* run did (the killed run
    # may have staged the Light candidates already), so there only MEMORY.md must match.
    finished: tuple[str, ...] | None = None
    writes_markdown: bool = True  # False: the command writes only the database (the index)
    entry: str | None = None  # a module run instead of the CLI (its main(argv)); None: the CLI
    mcp_call: tuple[str, dict[str, object]] | None = None  # (tool, arguments): the command is `mcp`

    def args(self, home: Path, ws: Path) -> list[str]:
        return self.command(home, ws) if callable(self.command) else list(self.command)

    def run(
        self,
        home: Path,
        ws: Path,
        command: list[str],
        at: int = 0,
        *,
        fault: str = "kill",
        count_to: Path | None = None,
        wrap: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``command`` (``args()`` of the prepared state) under tests/faults/inject.py, failed at its
        ``at``-th step (0: run whole, counting the steps into ``count_to`` if given); ``wrap`` is
        a command line it runs under (a read-only mount: tests/faults/read_only.py); ``env`` adds
        to the environment. An MCP call answered with an error exits 1 with the error's text as
        stderr, as the CLI would."""
        env = {
            **ENV,
            "CLAWMEM_NOW": self.now,
            "CLAWMEM_FAULT": fault,
            "CLAWMEM_FAULT_ENTRY": self.entry or "",
            **(env or {}),
        }
        if count_to:
            env["CLAWMEM_FAULT_COUNT"] = str(count_to)
        args = [
            *wrap,
            sys.executable,
            "-m",
            "tests.faults.inject",
            str(at),
            "--home",
            str(home),
            "--workspace",
            str(ws),
        ]
        args += command
        if self.mcp_call is None:
            return subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True)
        return _converse(args, env, *self.mcp_call)


def cli(home: Path, ws: Path, *args: str, check: bool = True, now: str = NOW) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "CLAWMEM_NOW": now}
    p = subprocess.run(
        [CLAWMEM, "--home", str(home), "--workspace", str(ws), *args], env=env, capture_output=True, text=True
    )
    if check:
        assert p.returncode == 0, p.stderr
    return p


def converse(
    args: list[str], env: dict[str, str], calls: list[tuple[str, dict[str, object]]]
) -> tuple[int, list[dict[str, Any]], str]:
    """An MCP host's session with the server on stdio: initialize, then each tool call in turn,
    each sent once the last is answered; stdin closes after the last answer (or when the server
    died), as a host that is done closes it. Returns (exit code, the calls' results, stderr)."""
    proc = subprocess.Popen(
        args, env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "faults", "version": "1"}}
    messages: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    messages += [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        for i, (tool, arguments) in enumerate(calls, start=1)
    ]
    results: list[dict[str, Any]] = []
    try:
        for message in messages:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:  # wait for its answer (an empty read: the server died)
                line = proc.stdout.readline()
                if not line:
                    break
                if message["id"]:
                    results.append(json.loads(line)["result"])
        proc.stdin.close()
    except BrokenPipeError:
        pass
    proc.stdout.read()
    assert proc.stderr is not None
    err = proc.stderr.read()
    return proc.wait(timeout=120), results, err


def _converse(
    args: list[str], env: dict[str, str], tool: str, arguments: dict[str, object]
) -> subprocess.CompletedProcess[str]:
    """One tool call as a command: exit 1 with the error's text as stderr when it was refused."""
    code, results, err = converse(args, env, [(tool, arguments)])
    if code == 0 and results and results[0].get("isError"):
        code, err = 1, "".join(part.get("text", "") for part in results[0]["content"]) + "\n" + err
    return subprocess.CompletedProcess(args, code, json.dumps(results), err)


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


def recalled_fact(home: Path, ws: Path) -> None:
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


def _proposed(home: Path, ws: Path) -> None:
    """A Dreaming rewrite of MEMORY.md waiting for review (what ``dream approve`` applies)."""
    recalled_fact(home, ws)
    cli(home, ws, "dream", now=DREAM_AT)


def _applied(home: Path, ws: Path) -> None:
    """A Dreaming rewrite applied to MEMORY.md (what ``dream revert`` takes back)."""
    recalled_fact(home, ws)
    cli(home, ws, "dream", "--apply", now=DREAM_AT)


def _proposal_id(home: Path, ws: Path) -> list[str]:
    return [json.loads(cli(home, ws, "dream", "review", "--json", now=DREAM_AT).stdout)[0]["id"]]


def _applied_id(home: Path, ws: Path) -> list[str]:
    return [json.loads(cli(home, ws, "dream", "history", "--json", now=DREAM_AT).stdout)[0]["proposalId"]]


def _superseded(home: Path, ws: Path) -> None:
    """MEMORY.md's deploy-day entry marked superseded by the on-call one (what --undo takes back)."""
    _keyword_home(home, ws)
    cli(home, ws, "supersede", "MEMORY.md:10", "--by", "MEMORY.md:12")


SCENARIOS = [
    Scenario("index --force", _keyword_home, ["index", "--force"], writes_markdown=False),
    Scenario("session flush", _with_session, ["session", "flush", B, "--text", B_FACT], rerun_if_done=False),
    Scenario("forget", _with_flushed_session, ["forget", "--session", B, "--yes"]),
    Scenario("dream --apply", recalled_fact, ["dream", "--apply"], now=DREAM_AT, finished=("MEMORY.md",)),
    Scenario("index (after an edit)", _edited_after_index, ["index"], writes_markdown=False),
    # a supersede that landed is not run twice (a second one is refused: the entry is superseded)
    Scenario("supersede", _keyword_home, ["supersede", "MEMORY.md:10", "--by", "MEMORY.md:12"], rerun_if_done=False),
    Scenario("supersede --undo", _superseded, ["supersede", "MEMORY.md:11", "--undo"], rerun_if_done=False),
    # approve and revert once done are refused (applied already; reverted already)
    Scenario(
        "dream approve",
        _proposed,
        lambda h, w: ["dream", "approve", *_proposal_id(h, w)],
        rerun_if_done=False,
        now=DREAM_AT,
    ),
    Scenario(
        "dream revert",
        _applied,
        lambda h, w: ["dream", "revert", *_applied_id(h, w)],
        rerun_if_done=False,
        now=DREAM_AT,
    ),
    Scenario(
        "session import --note", _keyword_home, ["session", "import", str(LINGYIN), "--note"], rerun_if_done=False
    ),
    Scenario(
        "mcp memory_append",
        _keyword_home,
        ["mcp"],
        rerun_if_done=False,
        mcp_call=("memory_append", {"text": "- The staging database moved to the new cluster in November."}),
    ),
    Scenario("app editor save", _keyword_home, [], rerun_if_done=False, entry="tests.faults.app_save"),
]


def markdown(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


def database(home: Path) -> Path:
    return home / "agents" / "main" / "agent" / "clawmem-agent.sqlite"
