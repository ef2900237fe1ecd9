"""Two agents append to one workspace at the same time and no line is lost.

Before the folder lock (``directory_lock`` in ``engine/workspace/writes.py``) two appenders read
the same old bytes: one was refused ("changed on disk since it was read") and, with two agents' databases on one workspace,
an atomic replace silently dropped the other's line (119 appends reported, 114 lines on disk).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio

from tests.mcp.conftest import ENV, TODAY, keyword_home, stdio_client, structured

N = 100


async def _append_many(home: Path, workspace: Path, agent: str, ready: anyio.Event, go: anyio.Event) -> list[int]:
    lines: list[int] = []
    async with stdio_client(home, workspace) as c:
        ready.set()
        await go.wait()
        for i in range(N):
            out = structured(await c.call_tool("memory_append", {"text": f"- {agent} note {i:03d}"}))
            lines.append(out["startLine"])
    return lines


async def test_two_servers_append_200_lines_none_lost(home: Path, workspace: Path, tmp_path: Path) -> None:
    keyword_home(home)
    (tmp_path / "home2").mkdir()
    home2 = keyword_home(tmp_path / "home2")  # a second agent: its own database, the same workspace
    results: dict[str, list[int]] = {}
    go = anyio.Event()
    ready = [anyio.Event(), anyio.Event()]

    async def one(h: Path, name: str, r: anyio.Event) -> None:
        results[name] = await _append_many(h, workspace, name, r, go)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, home, "alpha", ready[0])
        tg.start_soon(one, home2, "beta", ready[1])
        for r in ready:
            await r.wait()
        go.set()
    text = (workspace / "memory" / f"{TODAY}.md").read_text(encoding="utf-8")
    mine = [ln for ln in text.splitlines() if " note " in ln]
    assert len(mine) == 2 * N and len(set(mine)) == 2 * N
    for name in ("alpha", "beta"):
        assert [ln for ln in mine if ln.startswith(f"- {name} ")] == [f"- {name} note {i:03d}" for i in range(N)]
        assert len(set(results[name])) == N  # every append got its own line


SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from clawmem.engine.config import load_settings
    from clawmem.engine.facade import MemoryEngine
    home, workspace, who = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    settings = load_settings(home=home, workspace=workspace, overrides={"embedding": {"provider": "none"}})
    with MemoryEngine(settings, provider=None) as engine:
        for i in range(100):
            engine.sessions.append(f"- {who} {i}")
    """
)


def test_engine_appends_from_two_processes_lose_nothing(tmp_path: Path, workspace: Path) -> None:
    """The regression test at the engine's own door (no MCP): two processes, same and different databases."""
    for shared in (True, False):
        (workspace / "memory" / f"{TODAY}.md").unlink(missing_ok=True)
        homes = [tmp_path / f"h{shared}a", tmp_path / (f"h{shared}a" if shared else f"h{shared}b")]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", SCRIPT, str(h), str(workspace), who],
                env={**ENV, "PATH": "/usr/bin:/bin"},
                stderr=subprocess.PIPE,
                text=True,
            )
            for h, who in zip(homes, ("A", "B"), strict=True)
        ]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        lines = (workspace / "memory" / f"{TODAY}.md").read_text(encoding="utf-8").splitlines()
        assert sorted(lines) == sorted([f"- A {i}" for i in range(100)] + [f"- B {i}" for i in range(100)])
