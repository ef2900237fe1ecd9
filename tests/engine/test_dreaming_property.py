"""Property: random interleavings of user edits to MEMORY.md and Dreaming (propose, approve, revert)
never lose a byte the user wrote, and a refused apply or revert leaves the file byte-identical.

The interleavings reach every path of Dreaming that deletes text:

- **superseded**: two diary facts share ``<!-- supersedes: backup-time -->``; once the first is in
  MEMORY.md, promoting the second replaces its entry;
- **merged**: the same fact in two diaries; the second promotion merges with the first entry;
- **budget compaction**: MEMORY.md is filled with the user's own lines to near its 10,000-char
  budget (or not), so later promotions fall back to the append-only section and drop the oldest
  generated sections that are still exactly as Dreaming wrote them (with the loss bound at the
  default 25 % or at 100 %);
- **user edits of generated sections**: an edited promoted bullet is the user's from then on, and
  must survive merges, supersedes and compaction;
- approvals, stale approvals and reverts interleaved with all of it.

"What the user wrote" is tracked as a multiset of lines: the initial file, every line the user
appended, changed or edited (a deleted line leaves it). After every step each of those lines must
still be in MEMORY.md. The recall store is seeded once through ``record_search`` (the function
every search calls): each fact recalled by three queries on three days; ``deep_limit = 1`` makes
each cycle propose one fact (ties broken by path, so the order above holds). Each example runs on
its own copy of that workspace and database. Derandomized: the same examples on every run.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from clawmem.engine.config import Clock, parse_instant
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.recall import record_search
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.conftest import copy_fixture, make_settings
from tests.dreaming_fixture import DREAM_AT, hit

FACTS = {
    "memory/2026-11-01.md": "The backup job for the billing database runs at 02:30 UTC. <!-- supersedes: backup-time -->",
    "memory/2026-11-02.md": "The backup job for the billing database now runs at 04:00 UTC. <!-- supersedes: backup-time -->",
    "memory/2026-11-03.md": "Priya approves every production deploy of the payments service.",
    "memory/2026-11-04.md": "Priya approves every production deploy of the payments service.",
    "memory/2026-11-05.md": "The analytics warehouse keeps raw events for ninety days.",
    "memory/2026-11-05-ops.md": "Staging deploys freeze on Fridays after 15:00 local time.",
}
DAYS = ("2026-11-03T10:00:00+00:00", "2026-11-04T10:00:00+00:00", "2026-11-05T10:00:00+00:00")
BUDGET = 10_000


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


def generated(lines: list[str]) -> list[int]:
    """Indexes of the promoted bullets (consolidated or append-only form)."""
    return [i for i, ln in enumerate(lines) if ln.startswith("- ") and (" Source: memory/" in ln or "[score=" in ln)]


line = st.text(alphabet=list("abcxyz 你好-#*"), min_size=1, max_size=12).map(lambda t: f"- note {t.strip()}")
step = st.one_of(
    st.tuples(st.just("append"), line),
    st.tuples(st.just("change"), st.integers(0, 500), line),
    st.tuples(st.just("delete"), st.integers(0, 500)),
    st.tuples(st.just("edit"), st.integers(0, 50)),  # correct a promoted bullet by hand
    st.tuples(st.just("dream")),
    st.tuples(st.just("approve")),
    st.tuples(st.just("cycle")),  # propose and approve with nothing in between
    st.tuples(st.just("cycle")),
    st.tuples(st.just("cycle")),
    st.tuples(st.just("cycle")),
    st.tuples(st.just("revert")),
)
CYCLES: list[tuple[str, ...]] = [("cycle",)] * 6


@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    fill=st.sampled_from([0, 8_800, 9_300, 9_600]),
    max_loss=st.sampled_from([0.25, 1.0]),
    steps=st.lists(step, min_size=1, max_size=20),
)
# Always run: near the budget, every fact promoted in turn (added, superseded, merged, then
# compaction of pristine sections), with a hand-corrected bullet in between.
@example(fill=9_300, max_loss=1.0, steps=[*CYCLES[:3], ("edit", 0), *CYCLES, ("revert",)])
@example(fill=8_800, max_loss=0.25, steps=[("cycle",), ("edit", 0), *CYCLES, ("append", "- note x"), ("cycle",)])
@example(  # an edit while a proposal waits: the approval refuses; then reverts, refused and done
    fill=0,
    max_loss=0.25,
    steps=[("cycle",), ("dream",), ("edit", 0), ("approve",), *CYCLES[:4], ("revert",), ("revert",)],
)
def test_user_bytes_survive_any_interleaving(template: Path, fill: int, max_loss: float, steps: list[tuple]) -> None:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(template, root / "t")
        home, workspace = root / "t" / "home", root / "t" / "workspace"
        memory = workspace / "MEMORY.md"
        if fill:  # the user's own notes, up to `fill` characters
            text = memory.read_text(encoding="utf-8")
            notes = "".join(f"- My own note {i:04d}, kept exactly as I typed it.\n" for i in range(400))
            memory.write_text(text + notes[: max(0, fill - len(text))].rsplit("\n", 1)[0] + "\n", encoding="utf-8")
        cfg = make_settings(
            home,
            workspace,
            embedding={"provider": "none"},
            dreaming={"deep_limit": 1, "max_prior_entry_loss_fraction": max_loss},
        )
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
                elif action == "edit" and generated(lines):
                    targets = generated(lines)
                    index = targets[args[0] % len(targets)]
                    old = lines[index]
                    lines[index] = old.replace(". ", ". (checked by hand) ", 1) if ". " in old else old + " (checked)"
                    memory.write_text("\n".join(lines), encoding="utf-8")
                    expected[old] -= 1 if expected[old] > 0 else 0
                    expected[lines[index]] += 1
                    event("user edited a promoted bullet")
                elif action in ("dream", "cycle"):
                    run = engine.dreaming.run()
                    if run.proposal is not None:
                        p = run.proposal
                        event(f"proposed {p.mode}")
                        for kind, n in (("superseded", p.superseded), ("merged", p.merged)):
                            if n:
                                event(f"proposed a {kind} entry")
                        kept = Counter(p.after_text.splitlines())
                        if any(kept[ln] < n for ln, n in Counter(p.before_text.splitlines()).items() if ln.strip()):
                            event("proposal removes lines")
                    elif run.deep is not None and run.deep.skipped_reason:
                        event("nothing fits the budget: MEMORY.md unchanged")
                if action in ("approve", "cycle") and engine.dreaming.pending():
                    before = memory.read_bytes()
                    result = engine.dreaming.approve(engine.dreaming.pending()[-1].id)
                    event("apply " + ("done" if result.applied else "refused"))
                    if not result.applied:
                        assert memory.read_bytes() == before, "a refused apply changed MEMORY.md"
                    elif len(before.decode("utf-8")) <= BUDGET:
                        assert len(memory.read_text(encoding="utf-8")) <= BUDGET, "Dreaming broke the budget"
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
