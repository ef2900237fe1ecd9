"""Snapshots of the Intents pane at 100×30 and 160×45: the table with every state present, the
trigger simulator with one fire and several reasons, and the create form with validation errors.

The states are real: intents are created, fired and cancelled, and jobs run, through engines
whose clock is set to earlier days on the same home, before the app starts. Expiry, cooldown
and "done" then follow from the app's fixed clock (2026-11-05T09:00Z).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawmem.engine.config import Settings, load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp
from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.conftest import SNAP_ROOT
from tests.tui.test_snapshots import SIZES, settle
from tests.tui.test_snapshots_dreams import fixed_uuids

HANGZHOU = "下周末去杭州，记得提醒我订返程车票"


def engine_at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def intent_history(settings: Settings) -> dict[str, str]:
    """Intents in every state and jobs with runs, made on earlier days. Returns name → intent id."""
    ids: dict[str, str] = {}
    with engine_at(settings, "2026-10-01T09:00:00+00:00") as e:
        ids["expired"] = e.intents.create(
            "问一下国庆的照片洗好了没有", "照片; photos", channel="telegram", sender="alice", expires="2026-10-31"
        ).id
    with engine_at(settings, "2026-11-01T10:00:00+00:00") as e:
        create = e.intents.create
        ids["armed"] = create(
            "周末去杭州前提醒确认返程车票（候选 G7512）", "杭州; hangzhou; 返程", channel="telegram", sender="alice"
        ).id
        ids["done"] = create(
            "Mention that the billing migration review moved to Thursday",
            "billing; migration review",
            channel="slack",
            sender="bob",
            max_fires=1,
        ).id
        ids["cancelled"] = create("提醒带上酒店的取消政策截图", "酒店", channel="telegram", sender="alice").id
        ids["fired"] = create(
            "Remind Alice that Priya owns the load balancer cut-over",
            "load balancer; cut-over",
            channel="telegram",
            sender="alice",
            cooldown_hours=48,
        ).id
        ids["other-sender"] = create(
            "提醒 Bob 杭州之行预算上限 3000 元", "杭州; 预算", channel="telegram", sender="bob"
        ).id
        ids["any-channel"] = create(
            "Ask whether the certbot renewal alert ever fired",
            "certbot",
            channel="telegram",
            sender="alice",
            any_channel=True,
        ).id
        e.intents.cancel(ids["cancelled"])
        e.jobs.add(
            "Morning: check the Hangzhou return tickets",
            cron="0 8 * * *",
            tz="Asia/Shanghai",
            channel="telegram",
            sender="alice",
        )
        e.jobs.add("Pack for Hangzhou", at="2026-11-06T18:00", tz="Asia/Shanghai", channel="telegram", sender="alice")
        standup = e.jobs.add(
            "Billing deploy after the Tuesday standup",
            cron="0 10 * * 2",
            tz="Europe/Berlin",
            channel="slack",
            sender="bob",
        )
    with engine_at(settings, "2026-11-03T09:00:00+00:00") as e:
        assert e.intents.match("when is the billing migration review?", channel="slack", sender="bob", apply=True).fired
        assert len(e.jobs.run_due().results) == 2
    with engine_at(settings, "2026-11-04T01:00:00+00:00") as e:
        assert len(e.jobs.run_due().results) == 1
        e.jobs.cancel(standup.id)
    with engine_at(settings, "2026-11-05T07:00:00+00:00") as e:
        assert e.intents.match(
            "is the load balancer cut-over done?", channel="telegram", sender="alice", apply=True
        ).fired
    return ids


@pytest.fixture
def intents_app(
    request: pytest.FixtureRequest, indexed_templates: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., ClawmemApp]]:
    """Like ``make_app``, with the intents and jobs above made before the app is built."""
    fixed_uuids(monkeypatch)
    engines: list[MemoryEngine] = []
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)

    def make() -> ClawmemApp:
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        shutil.copytree(indexed_templates("workspace"), base)
        settings = load_settings(home=base / "home", workspace=base / "workspace")
        intent_history(settings)
        engine = MemoryEngine(settings)
        engines.append(engine)
        return ClawmemApp(engine, watch=False, background_index=False)

    yield make
    for engine in engines:
        engine.close()


@pytest.mark.parametrize("size", SIZES)
def test_intents_table_with_every_state(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app = intents_app()
    states = {i.status for i in app.engine.intents.list()}
    assert states == {"armed", "fired", "done", "cancelled", "expired"}

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_intents_simulator_one_fire_and_reasons(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app = intents_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7", "ctrl+l")
        pilot.app.query_one("#intents-message", Input).value = HANGZHOU  # "，" cannot be pressed as a key
        await pilot.press("tab", *"telegram", "tab", *"alice", "enter")
        await settle(pilot, 0.8)
        await pilot.press("escape")  # back to the table: no cursor in the snapshot
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_intents_create_form_with_validation_errors(snap_compare, intents_app: Callable[..., ClawmemApp], size) -> None:
    app = intents_app()

    async def run_before(pilot: Pilot[object]) -> None:
        await settle(pilot)
        await pilot.press("7", "n")
        await settle(pilot)
        await pilot.press(*"提醒确认返程车票", "tab", "tab", *"telegram", "tab", "tab", "tab", "tab")
        await pilot.press(*"2026-10-01", "enter")
        await settle(pilot, 0.8)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
