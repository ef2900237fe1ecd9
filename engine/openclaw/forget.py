"""Forgetting one of OpenClaw's sessions from clawmem (docs/memory-core.md §7, issue "a real OpenClaw home").

clawmem never deletes from OpenClaw's databases or rewrites the agent's files on its behalf: a
forget of an OpenClaw session removes what clawmem derived from it — the chunks of
``sessions/openclaw/<id>.jsonl`` in clawmem's index, their FTS, vector and embedding-cache rows —
and tombstones the id in clawmem's home so it is never indexed again. The source stays with
OpenClaw; the plan gives the commands that remove it there (``memory forget --agent <id>
--session <id|key>… [--dry-run]``, docs/memory-core.md §7 command line).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

RESOLVED_AS = "openclaw"  # a SessionResolution.source: the session is the OpenClaw agent's


def forget_commands(agent_id: str, selectors: Sequence[str]) -> tuple[str, ...]:
    """OpenClaw's own forget for these sessions: the dry run first, then the real one."""
    if not selectors:
        return ()
    picked = " ".join(f"--session {shlex.quote(s)}" for s in dict.fromkeys(selectors))
    base = f"openclaw memory forget --agent {shlex.quote(agent_id)} {picked}"
    return (f"{base} --dry-run", base)
