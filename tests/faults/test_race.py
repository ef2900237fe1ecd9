"""Every writer at once on one workspace, for a fixed number of operations (issue "Nothing lost
under faults"): the app under Pilot editing and saving MEMORY.md with its file watcher
re-indexing, Dreaming applying and reverting a rewrite of MEMORY.md, two MCP servers appending
to today's diary, and the CLI flushing a session's lines into a diary — all real processes
against one home and one workspace.

Afterwards: every appended and flushed line is in its diary exactly once; every line the person
typed in the app is in MEMORY.md or in a conflict copy the app made (a conflict is shown as the
conflict dialog, answered "keep mine", which keeps the disk's version as a copy); every Dreaming
step either succeeded or was refused in one line because MEMORY.md changed; no "database is
locked" reached anyone (stderr, a tool result, a notification) and there is no traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

from clawmem.engine.config import load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from clawmem.tui.modals.conflict import ConflictModal
from clawmem.tui.panes.editor import EditorPane
from textual.widgets import TextArea

from tests.conftest import FIXTURES, NOW
from tests.dreaming_fixture import DREAM_AT
from tests.faults.app_save import open_memory_in_editor
from tests.faults.scenarios import CLAWMEM, ENV, cli, converse, recalled_fact
from tests.session_fixture import LINGYIN, B
from tests.tui.waits import settle, wait_for

OPS = 6  # operations per writer
TODAY = NOW[:10]


def _mcp_appends(home: Path, ws: Path, who: str, out: dict[str, object]) -> None:
    calls: list[tuple[str, dict[str, object]]] = [
        ("memory_append", {"text": f"- {who} appended note {i}: the deploy window is {i} pm."}) for i in range(OPS)
    ]
    args = [CLAWMEM, "--home", str(home), "--workspace", str(ws), "mcp"]
    out[who] = converse(args, ENV, calls)


def _flushes(home: Path, ws: Path, out: dict[str, object]) -> None:
    runs = [
        cli(home, ws, "session", "flush", B, "--text", f"- flushed line {i}: bring the tickets.", check=False)
        for i in range(OPS)
    ]
    out["flush"] = runs


def _dreams(home: Path, ws: Path, out: dict[str, object]) -> None:
    """Apply Deep's rewrite, then revert it, OPS times in all (each may be refused: MEMORY.md changed)."""
    runs: list[subprocess.CompletedProcess[str]] = []
    for i in range(OPS):
        if i % 2 == 0:
            runs.append(cli(home, ws, "dream", "--apply", now=DREAM_AT, check=False))
        else:
            history = cli(home, ws, "dream", "history", "--json", now=DREAM_AT, check=False)
            runs.append(history)
            applied = [h for h in json.loads(history.stdout or "[]") if h["status"] == "applied"]
            if applied:
                runs.append(cli(home, ws, "dream", "revert", applied[0]["proposalId"], now=DREAM_AT, check=False))
    out["dream"] = runs


async def _edit_and_save_in_the_app(home: Path, ws: Path, typed: list[str], notes: list[str]) -> int:
    """OPS saves of MEMORY.md in the app's editor, each with a new line typed at the end; a
    conflict is answered "keep mine" (the disk's version is kept as a conflict copy). Every
    notification the app shows is kept in ``notes`` (severity: title: message). Returns how
    many times the conflict dialog came up."""
    conflicts = 0
    with MemoryEngine(load_settings(home=home, workspace=ws)) as engine:
        app = ClawmemApp(engine, watch=True, background_index=False)
        show = app.notify

        def notify(message: str, *, title: str = "", severity: str = "information", **kw: object) -> None:
            notes.append(f"{severity}: {title}: {message}")
            show(message, title=title, severity=severity, **kw)  # type: ignore[arg-type]

        app.notify = notify  # type: ignore[method-assign]
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(pilot)
            await open_memory_in_editor(app, pilot)
            pane = app.query_one(EditorPane)
            for i in range(OPS):
                editor = app.query_one("#editor-area", TextArea)
                line = f"- typed in the app {i}: water the plants on Sunday."
                typed.append(line)
                editor.insert(line + "\n", location=editor.document.end)
                await pilot.press("f2")
                # saved (nothing unsaved left), or the conflict dialog is up
                await wait_for(pilot, lambda: isinstance(app.screen, ConflictModal) or not pane.modified, timeout=60)
                while isinstance(app.screen, ConflictModal):
                    conflicts += 1
                    await pilot.press("m")  # keep mine; the disk's version becomes a conflict copy
                    await wait_for(
                        pilot, lambda: isinstance(app.screen, ConflictModal) or not pane.modified, timeout=60
                    )
                await settle(pilot)
    return conflicts


async def test_every_writer_at_once_loses_nothing_and_locks_out_no_one(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    shutil.copytree(FIXTURES / "workspace", ws)
    recalled_fact(home, ws)  # a fact Dreaming promotes
    cli(home, ws, "session", "import", str(LINGYIN))  # a session the CLI flushes from

    out: dict[str, object] = {}
    threads = [
        threading.Thread(target=_mcp_appends, args=(home, ws, "agent-a", out)),
        threading.Thread(target=_mcp_appends, args=(home, ws, "agent-b", out)),
        threading.Thread(target=_flushes, args=(home, ws, out)),
        threading.Thread(target=_dreams, args=(home, ws, out)),
    ]
    for t in threads:
        t.start()
    typed: list[str] = []
    notes: list[str] = []
    conflicts = await _edit_and_save_in_the_app(home, ws, typed, notes)
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)

    # The MCP servers: every call answered and none refused; each line once in today's diary.
    diary = (ws / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    for who in ("agent-a", "agent-b"):
        code, results, err = out[who]  # type: ignore[misc]
        assert code == 0 and len(results) == OPS, (who, code, err)
        assert not [r for r in results if r.get("isError")], results
        assert "Traceback" not in err and "locked" not in err, err
        for i in range(OPS):
            assert diary.count(f"- {who} appended note {i}: the deploy window is {i} pm.") == 1, (who, i)
    # The CLI flushes: each succeeded and its line is in a diary exactly once.
    diaries = "".join(p.read_text(encoding="utf-8") for p in (ws / "memory").glob("*.md"))
    for i, run in enumerate(out["flush"]):  # type: ignore[arg-type]
        assert run.returncode == 0, run.stderr
        assert diaries.count(f"- flushed line {i}: bring the tickets.") == 1, i
    # Dreaming: done, or refused in one line because MEMORY.md changed meanwhile.
    refused = 0
    for run in out["dream"]:  # type: ignore[attr-defined]
        refused += run.returncode != 0
        err = run.stderr
        assert "Traceback" not in err and "locked" not in err and "internal error" not in err, err
        if run.returncode != 0:
            assert len(err.strip().splitlines()) == 1 and "changed" in err, err
    # The app: every typed line in MEMORY.md or in a conflict copy; no error notification.
    copies = sorted((home / "conflicts").glob("*.md"))  # none when no save met a conflict
    kept = (ws / "MEMORY.md").read_text(encoding="utf-8") + "".join(p.read_text(encoding="utf-8") for p in copies)
    for line in typed:
        assert line in kept, line
    assert not [n for n in notes if n.startswith("error") or "locked" in n], notes
    assert sum("saved" in n for n in notes) >= OPS, notes  # each typed line was saved (or kept as mine)
    # The index caught up: a search finds the last lines of each writer.
    p = cli(home, ws, "search", "deploy window", "--json", "--no-record")
    assert json.loads(p.stdout)["results"]
    operations = 2 * OPS + OPS + len(out["dream"]) + OPS  # type: ignore[arg-type]
    print(f"\nrace: {operations} operations, {conflicts} conflict dialogs, {refused} Dreaming steps refused")
