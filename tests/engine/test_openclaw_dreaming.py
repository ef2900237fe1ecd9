"""What a real OpenClaw agent would promote tonight (tests/fixtures/openclaw-home, OpenClaw 2026.9.6):
its short-term recall store read in place, ranked by clawmem's Deep with OpenClaw's defaults, each
gate passed or failed with the numbers, the recall events as history — and no byte of the home
changed. OpenClaw's own ``memory promote`` reports ``candidates: []`` on this home; so must we."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clawmem.engine.config import Clock
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.store.openclaw.schema import SchemaRefused

from tests.openclaw_fixture import EVENTS, alter, digest, state_db

# A day after the fixture's searches (2026-12-05 07:32 UTC), so recency is real, not clamped.
CLOCK = Clock(fixed=datetime(2026, 12, 6, 7, 32, tzinfo=UTC))
BEST = "memory:memory/2026-11-27.md:1:6"


def test_three_candidates_none_promoted_and_why(openclaw_home: Path) -> None:
    before = digest(openclaw_home)
    d = OpenClawHome.open(openclaw_home).dreaming(CLOCK)
    assert [c.explanation.recall_count for c in d.candidates] == [3, 1, 1]
    assert [c.explanation.path for c in d.candidates] == [
        "memory/2026-11-27.md",
        "memory/2026-11-21.md",
        "memory/2026-11-20.md",
    ]
    assert d.would_promote == ()  # OpenClaw's `memory promote`: candidates []
    assert (d.min_score, d.min_recall_count, d.min_unique_queries) == (0.75, 3, 3)
    best, *ones = d.candidates
    assert best.key == BEST and best.held_back_by == ("score",)
    gates = {g.name: g for g in best.explanation.gates}
    assert gates["signals"].passed and gates["signals"].actual == "3"
    assert gates["unique-queries"].passed and gates["unique-queries"].actual == "3"
    assert not gates["score"].passed and gates["score"].needed == "≥ 0.75"
    assert best.explanation.status == "below-gates" and "of 0.75 needed" in best.explanation.reason
    for c in ones:
        assert c.held_back_by == ("signals", "unique-queries", "score")
        assert "1 signals of 3 needed" in c.explanation.reason
    assert digest(openclaw_home) == before


def test_the_score_is_clawmems_deep_formula_on_openclaws_numbers(openclaw_home: Path) -> None:
    best = OpenClawHome.open(openclaw_home).dreaming(CLOCK).candidates[0].explanation
    c = best.components
    assert c.frequency == pytest.approx(math.log(4) / math.log(11))
    assert c.relevance == pytest.approx(1.7989885068994087 / 3)
    assert (c.diversity, c.consolidation, c.conceptual) == (pytest.approx(0.6), 0.2, 1.0)
    assert c.recency == pytest.approx(math.exp(-math.log(2) * (1 - 50.23 / 86400) / 14))
    total = 0.24 * c.frequency + 0.30 * c.relevance + 0.15 * 0.6 + 0.15 * c.recency + 0.10 * 0.2 + 0.06
    assert best.score == pytest.approx(total)
    assert best.score < 0.75


def test_recall_history_is_the_recorded_events(openclaw_home: Path) -> None:
    d = OpenClawHome.open(openclaw_home).dreaming(CLOCK)
    history = {c.explanation.path: c.history for c in d.candidates}
    # Three recalls, two events: the CLI turn's search updated the entry but wrote no event.
    assert [e.query for e in history["memory/2026-11-27.md"]] == [
        "payments API degraded TLS certificate",
        "支付 故障 复盘",
    ]
    assert history["memory/2026-11-27.md"][0].score == pytest.approx(0.8252276027863827)
    assert [e.query for e in history["memory/2026-11-20.md"]] == ["杭州 西湖醋鱼 东坡肉"]
    assert [e.query for e in history["memory/2026-11-21.md"]] == ["Longjing tea team"]


def test_find_by_key_line_or_prefix(openclaw_home: Path) -> None:
    home = OpenClawHome.open(openclaw_home)
    for selector in (BEST, "memory/2026-11-27.md:4", "memory:memory/2026-11-27"):
        found = home.dream_candidate(selector, CLOCK)
        assert found is not None and found.key == BEST, selector
    assert home.dream_candidate("memory/2026-11-27.md:9", CLOCK) is None
    assert home.dream_candidate("memory:memory/2026-11-2", CLOCK) is None  # not unique


def test_other_workspaces_entries_are_left_out(openclaw_home: Path) -> None:
    alter(
        state_db(openclaw_home),
        "UPDATE plugin_state_entries SET value_json = json_set(value_json, '$.workspaceKey', 'elsewhere', "
        "'$.workspaceDir', '/srv/other/workspace') WHERE namespace = 'short-term-recall' "
        "AND value_json LIKE '%2026-11-20.md%'",
        "INSERT INTO plugin_state_entries (plugin_id, namespace, entry_key, value_json, created_at) "
        "VALUES ('memory-core', 'short-term-recall', 'broken', '{not json', 0)",
    )
    d = OpenClawHome.open(openclaw_home).dreaming(CLOCK)
    assert [c.explanation.path for c in d.candidates] == ["memory/2026-11-27.md", "memory/2026-11-21.md"]
    assert d.other_workspaces == 1
    assert len(d.skipped) == 1 and d.skipped[0].startswith("short-term-recall broken: ")


@pytest.mark.parametrize(
    "statement, words",
    [
        ("DROP TABLE plugin_state_entries", "it has no table plugin_state_entries"),
        (
            "ALTER TABLE plugin_state_entries DROP COLUMN value_json",
            "table plugin_state_entries has no column value_json",
        ),
    ],
)
def test_a_state_db_without_the_recall_store_is_refused_alone(openclaw_home: Path, statement: str, words: str) -> None:
    alter(state_db(openclaw_home), statement)
    home = OpenClawHome.open(openclaw_home)
    with pytest.raises(SchemaRefused) as refused:
        home.dreaming(CLOCK)
    message = str(refused.value)
    assert "\n" not in message and words in message and "its Dreaming recall store" in message
    assert sorted(s.event_count for s in home.sessions()) == sorted(EVENTS.values())  # the rest still reads


def test_value_json_is_read_not_rewritten(openclaw_home: Path) -> None:
    """The decoded entry carries OpenClaw's own numbers (nothing recomputed from the events)."""
    import apsw

    conn = apsw.Connection(
        f"file:{state_db(openclaw_home)}?immutable=1", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    raw = {
        json.loads(v)["key"]: json.loads(v)["value"]
        for (v,) in conn.execute("SELECT value_json FROM plugin_state_entries WHERE namespace = 'short-term-recall'")
    }
    conn.close()
    for c in OpenClawHome.open(openclaw_home).dreaming(CLOCK).candidates:
        value = raw[c.key]
        e = c.explanation
        assert (e.recall_count, e.unique_queries) == (value["recallCount"], len(value["userQueryHashes"]))
        assert e.max_score == pytest.approx(value["maxScore"]) and e.concept_tags == tuple(value["conceptTags"])
