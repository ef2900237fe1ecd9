"""Property: random interleavings of user edits to MEMORY.md and Dreaming (propose, approve, revert)
never lose a byte the user wrote, and a refused apply or revert leaves the file byte-identical.

The recall store is seeded once through ``record_search`` (the function every search calls) with
four diary facts, each recalled by three queries on three days; ``deep_limit = 1`` makes each
cycle propose one of them. Each example runs on its own copy of that workspace and database.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine.config import Clock, parse_instant
from engine.facade import MemoryEngine
from engine.recall import record_search
from tests.conftest import copy_fixture, make_settings
from tests.engine.test_dreaming import DREAM_AT, hit

FACTS = {
    "memory/2026-11-01.md": "The backup job for the billing database runs at 02:30 UTC.",
    "memory/2026-11-02.md": "The staging database password rotates every Friday at noon.",
    "memory/2026-11-03.md": "Priya approves every production deploy of the payments service.",
    "memory/2026-11-04.md": "The analytics warehouse keeps raw events for ninety days.",
}
DAYS = ("2026-11-03T10:00:00+00:00", "2026-11-04T10:00:00+00:00", "2026-11-05T10:00:00+00:00")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dream-template")
    workspace = copy_fixture("workspace", root)
    (root / "home").mkdir()
    for rel, fact in FACTS.items():
        (workspace / rel).write_text(f"- {fact}\n", encoding="utf-8")
    with MemoryEngine(make_settings(root / "home", workspace, embedding={"provider": "none"})) as engine:
        conn = engine.store.conn()
        for n, day in enumerate(DAYS):
            for rel, fact in FACTS.items():
                record_search(conn, f"query {n} {rel}", [hit(rel, f"- {fact}", 0.95)], Clock(fixed=parse_instant(day)))
    return root


line = st.text(alphabet=list("abcxyz 你好-#*"), min_size=1, max_size=12).map(lambda t: f"- note {t.strip()}")
step = st.one_of(
    st.tuples(st.just("append"), line),
    st.tuples(st.just("change"), st.integers(0, 500), line),
    st.tuples(st.just("delete"), st.integers(0, 500)),
    st.tuples(st.just("dream")),
    st.tuples(st.just("approve")),
    st.tuples(st.just("cycle")),  # propose and approve with nothing in between
    st.tuples(st.just("cycle")),
    st.tuples(st.just("revert")),
    st.tuples(st.just("revert")),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(step, min_size=1, max_size=14))
def test_user_bytes_survive_any_interleaving(template: Path, steps: list[tuple]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(template, root / "t")
        home, workspace = root / "t" / "home", root / "t" / "workspace"
        memory = workspace / "MEMORY.md"
        cfg = make_settings(home, workspace, embedding={"provider": "none"}, dreaming={"deep_limit": 1})
        expected = Counter(memory.read_text(encoding="utf-8").splitlines())
        with MemoryEngine(dataclasses.replace(cfg, now=DREAM_AT)) as engine:
            for action, *args in steps:
                text = memory.read_text(encoding="utf-8")
                lines = text.split("\n")
                if action == "append":
                    memory.write_text(text + ("" if text.endswith("\n") else "\n") + args[0] + "\n", encoding="utf-8")
                    expected[args[0]] += 1
                elif action == "change" and lines:
                    index = args[0] % len(lines)
                    old, lines[index] = lines[index], args[1]
                    memory.write_text("\n".join(lines), encoding="utf-8")
                    expected[old] -= 1 if expected[old] > 0 else 0
                    expected[args[1]] += 1
                elif action == "delete" and lines:
                    old = lines.pop(args[0] % len(lines))
                    memory.write_text("\n".join(lines), encoding="utf-8")
                    expected[old] -= 1 if expected[old] > 0 else 0
                elif action in ("dream", "cycle"):
                    engine.dreaming.run()
                if action in ("approve", "cycle") and engine.dreaming.pending():
                    before = memory.read_bytes()
                    result = engine.dreaming.approve(engine.dreaming.pending()[-1].id)
                    event("apply " + ("done" if result.applied else "refused"))
                    if not result.applied:
                        assert memory.read_bytes() == before, "a refused apply changed MEMORY.md"
                if action == "revert":
                    applied = [h for h in engine.dreaming.history() if h.status == "applied"]
                    if applied:
                        before = memory.read_bytes()
                        outcome = engine.dreaming.revert(applied[0].proposal_id)
                        event("revert " + ("done" if outcome.reverted else "refused"))
                        if not outcome.reverted:
                            assert memory.read_bytes() == before, "a refused revert changed MEMORY.md"
                now = Counter(memory.read_text(encoding="utf-8").splitlines())
                missing = expected - now
                assert not missing, f"user lines lost after {action}: {sorted(missing)}"
