"""Snapshots of the Dreams pane at 100×30 and 160×45: a pending proposal with its diff, an applied
rewrite in history, a refused revert with the three texts, and the explain view of a candidate
one unique query short of promotion.

The recall signals are real: keyword searches by engines whose clock is set to earlier days, on
the same home and workspace, before the app starts (as tests/engine/test_dreaming.py does).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from clawmem.engine.config import Settings, load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot

from tests.tui.conftest import SNAP_ROOT
from tests.tui.test_snapshots import SIZES, settle

FACT_PATH = "memory/2026-11-03-staging.md"
FACT = "The staging database password rotates every Friday at noon."
SHORT_PATH = "memory/2026-11-04-checkout.md"
SHORT_FACT = "杭州酒店的退房时间是中午十二点，可以延迟到下午两点。"
# (clock, query, expected path): three unique queries on three days promote FACT; SHORT_FACT gets
# three recalls from only two different queries — one unique query short. Each query finds only its
# note, at full keyword coverage, so the scores do not move with the ranking of unrelated files (no
# word of them is in another file: a keyword probe for "staging" or "noon" would find other notes).
RECALLS = (
    ("2026-11-03T10:00:00+00:00", "database password", FACT_PATH),
    ("2026-11-04T10:00:00+00:00", "friday database password", FACT_PATH),
    ("2026-11-05T08:00:00+00:00", "password on friday", FACT_PATH),
    ("2026-11-04T11:00:00+00:00", "退房", SHORT_PATH),
    ("2026-11-05T08:30:00+00:00", "中午十二点", SHORT_PATH),
    ("2026-11-05T08:40:00+00:00", "退房", SHORT_PATH),
)


def engine_at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def recall_history(settings: Settings) -> None:
    """Write the two notes, index them, and recall them on earlier days (keyword searches, no model)."""
    workspace = settings.workspace
    (workspace / FACT_PATH).write_text(f"- {FACT}\n", encoding="utf-8")
    (workspace / SHORT_PATH).write_text(f"- {SHORT_FACT}\n", encoding="utf-8")
    with engine_at(settings, RECALLS[0][0]) as e:
        e.sync()
    for now, query, path in RECALLS:
        with engine_at(settings, now) as e:
            hits = e.search(query, legs="keyword", sync=False).results
            assert [h.path for h in hits] == [path], (query, [h.path for h in hits])


def fixed_uuids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proposal, run, intent and job ids are random uuid4s; the ids are shown, so the snapshots need
    the same ones on every run. This is the only stand-in: each of those modules gets its own fixed
    sequence of (valid, distinct) uuids — per module, so that a stray thread of an earlier test
    calling ``uuid.uuid4`` elsewhere cannot shift the sequence."""
    from clawmem.engine.dreaming import service as dreaming_service
    from clawmem.engine.intents import automation
    from clawmem.engine.intents import service as intents_service

    # Each sequence is seeded by the module's name before the engine became feature packages,
    # so the ids (and the snapshots that show them) did not change with the move.
    for module, name in (
        (intents_service, "engine.intents"),
        (automation, "engine.automation"),
        (dreaming_service, "engine.dreaming.service"),
    ):
        counter = itertools.count(1)

        def fake_uuid4(counter: itertools.count[int] = counter, name: str = name) -> uuid.UUID:
            return uuid.UUID(bytes=hashlib.sha1(f"{name}-{next(counter)}".encode()).digest()[:16], version=4)

        monkeypatch.setattr(module, "uuid", SimpleNamespace(uuid4=fake_uuid4))


@pytest.fixture
def dream_app(
    request: pytest.FixtureRequest, indexed_templates: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., ClawmemApp]]:
    """Like ``make_app``, with recall signals recorded on earlier days before the app is built."""
    fixed_uuids(monkeypatch)
    engines: list[MemoryEngine] = []
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)

    def make(**dreaming: object) -> ClawmemApp:
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        shutil.copytree(indexed_templates("workspace"), base)
        overrides = {"dreaming": dict(dreaming)} if dreaming else None
        settings = load_settings(home=base / "home", workspace=base / "workspace", overrides=overrides)
        recall_history(settings)
        engine = MemoryEngine(settings)
        engines.append(engine)
        return ClawmemApp(engine, watch=False, background_index=False)

    yield make
    for engine in engines:
        engine.close()


async def open_view(pilot: Pilot[object], key: str) -> None:
    await settle(pilot)
    await pilot.press("6")
    await settle(pilot)
    await pilot.press(key)
    await settle(pilot)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_pending_proposal_with_its_diff(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    run = app.engine.dreaming.run()
    assert run.proposal is not None and run.proposal.status == "pending"

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "p")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_applied_rewrite_in_history(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None and app.engine.dreaming.approve(proposal.id).applied

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "h")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_refused_revert_shows_the_three_texts(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    proposal = app.engine.dreaming.run().proposal
    assert proposal is not None and app.engine.dreaming.approve(proposal.id).applied
    memory = app.engine.workspace / "MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + "- 周五前订好返程车票（我自己加的）。\n", encoding="utf-8")

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "h")
        await pilot.press("R")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_dreams_explain_one_unique_query_short(snap_compare, dream_app: Callable[..., ClawmemApp], size) -> None:
    app = dream_app()
    short = app.engine.dreaming.explain(f"{SHORT_PATH}:1")
    assert short.status == "below-gates" and short.unique_queries == 2 and short.signal_count == 3
    rows = [e.key for e in app.engine.dreaming.candidates()]

    async def run_before(pilot: Pilot[object]) -> None:
        await open_view(pilot, "c")
        await pilot.press(*["j"] * rows.index(short.key))
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
