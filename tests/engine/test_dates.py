"""Dates a query names: what the parser understands, how a diary's date matches, and what the
search does with them (calibrated scoring only; `--scoring openclaw` stays the spec's formula)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.dates import REPORT_DAYS, date_match, diary_date, query_dates
from clawmem.engine.store.search_reader import SqliteSearchReader

from tests.conftest import make_settings

TODAY = date(2026, 11, 5)  # a Thursday; the fixed clock's date (tests/conftest.py)


@pytest.mark.parametrize(
    ("query", "spans"),
    [
        ("what did we decide on 2026-08-20", ["2026-08-20"]),
        ("notes from 2026/8/20", ["2026-08-20"]),
        ("What painting did Melanie show on October 13, 2023?", ["2023-10-13"]),
        ("What did Gina find on 1 February, 2023?", ["2023-02-01"]),
        ("the 5th of May 2022", ["2022-05-05"]),
        ("what happened on Oct 13", ["2026-10-13"]),
        ("what happened on December 24", ["2025-12-24"]),  # no year: the latest one before today
        ("2026年8月20日的事故", ["2026-08-20"]),
        ("8月20号发生了什么", ["2026-08-20"]),
        ("2025年3月的预算", ["2025-03"]),
        ("3月的计划", ["2026-03"]),
        ("the plan for 2026-03", ["2026-03"]),
        ("What setback did Melanie face in October 2023?", ["2023-10"]),
        ("camping in June", ["2026-06"]),
        ("camping in December", ["2025-12"]),
        ("trips in 2023", ["2023"]),
        ("2024年的旅行", ["2024"]),
        ("what did I do yesterday", ["2026-11-04"]),
        ("昨天的会议", ["2026-11-04"]),
        ("the day before yesterday", ["2026-11-03"]),
        ("last week", ["2026-10-26…2026-11-01"]),
        ("上周的决定", ["2026-10-26…2026-11-01"]),
        ("this month", ["2026-11-01…2026-11-05"]),
        ("last month", ["2026-10"]),
        ("去年的预算", ["2025"]),
        ("what changed in the last year", ["2025-11-06…2026-11-05"]),
        ("the past week", ["2026-10-30…2026-11-05"]),
        ("where was he in the last week of October 2023", ["2023-10"]),  # not "last week"
        ("in May", ["2026-05"]),
        ("what did Maria do the weekend before April 10, 2023", ["2023-04-03…2023-04-10"]),
        ("the Saturday after October 28, 2023", ["2023-10-28…2023-11-04"]),
        ("after his trip in August 2023", ["2023-08"]),  # a month stays the month
        ("you may want to book", []),  # "may" the verb
        ("march on", []),
        ("I paid 2000 dollars", []),  # a number is not a year without "in", "since", …
        ("February 30", []),  # no such day
        ("which hotel did we book", []),
    ],
)
def test_dates_a_query_names(query: str, spans: list[str]) -> None:
    assert [s.label() for s in query_dates(query, TODAY)] == spans


def test_a_diary_matches_its_day_and_less_on_the_days_after() -> None:
    spans = query_dates("on 2026-08-20", TODAY)
    assert diary_date("memory/2026-08-20.md") == date(2026, 8, 20)
    assert diary_date("memory/2026-11-03-hotel-call.md") is None  # a slugged note is not a diary
    assert diary_date("MEMORY.md") is None
    got = [date_match(date(2026, 8, d), spans) for d in range(19, 26)]
    assert got == [0.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    assert REPORT_DAYS == 3
    assert date_match(None, spans) == 0.0


def _write(ws: Path, rel: str, text: str) -> None:
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def diary_engine(home: Path, tmp_path: Path) -> MemoryEngine:
    """Keyword-only (no model): four diaries about the same thing, on different days."""
    ws = tmp_path / "ws"
    for day in ("2026-08-18", "2026-08-20", "2026-09-02", "2026-10-01"):
        _write(ws, f"memory/{day}.md", f"# {day}\n\n- Standup: the team talked about the deploy pipeline.\n")
    _write(ws, "MEMORY.md", "# Memory\n\n- 2026-08-20: decided to pin the deploy pipeline's runner image.\n")
    _write(ws, "memory/2025-08-20.md", "# 2025-08-20\n\n- Holiday, nothing about work.\n")
    # The same settings as a config file, so the command line sees them too.
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n\n[search]\ndecay_enabled = false\n')
    engine = MemoryEngine(make_settings(home, ws))
    engine.sync()
    return engine


def test_the_diary_of_the_day_asked_for_ranks_first_and_says_why(diary_engine: MemoryEngine) -> None:
    plain = diary_engine.search("deploy pipeline", max_results=10, min_score=0.0, record=False)
    asked = diary_engine.search("deploy pipeline on August 20", max_results=10, min_score=0.0, record=False)
    assert plain.dates == () and all(h.breakdown.date_match is None for h in plain.results)
    assert asked.dates == ("2026-08-20 (August 20)",)
    assert asked.dated_diaries == 1  # 2025-08-20 is another year; 08-18 is before the day
    by_path = {h.path: h for h in asked.results}
    day = by_path["memory/2026-08-20.md"]
    assert day.breakdown.date_match == 1.0 and "date" in day.legs
    # The MEMORY.md entry names the day in its text: it covers the date concept too.
    assert by_path["MEMORY.md"].breakdown.date_match == 1.0
    assert by_path["memory/2026-08-18.md"].breakdown.date_match == 0.0
    assert by_path["memory/2026-09-02.md"].breakdown.date_match == 0.0
    # Same words in every diary: only the date tells them apart, and the day's diary wins.
    diaries = [h.path for h in asked.results if h.path.startswith("memory/2026")]
    assert diaries[0] == "memory/2026-08-20.md"
    assert day.breakdown.keyword > by_path["memory/2026-08-18.md"].breakdown.keyword


def test_a_diary_written_days_later_gets_part_of_the_credit(diary_engine: MemoryEngine) -> None:
    r = diary_engine.search("deploy pipeline on 2026-08-17", max_results=10, min_score=0.0, record=False)
    by_path = {h.path: h for h in r.results}
    assert by_path["memory/2026-08-18.md"].breakdown.date_match == 0.75
    assert by_path["memory/2026-08-20.md"].breakdown.date_match == 0.25
    assert [h.path for h in r.results if h.path.startswith("memory/2026")][:2] == [
        "memory/2026-08-18.md",
        "memory/2026-08-20.md",
    ]


def test_a_date_with_no_diary_changes_nothing(diary_engine: MemoryEngine) -> None:
    plain = diary_engine.search("deploy pipeline", max_results=10, min_score=0.0, record=False)
    other = diary_engine.search("deploy pipeline in 2019", max_results=10, min_score=0.0, record=False)
    assert other.dates == ("2019 (2019)",) and other.dated_diaries == 0
    assert [(h.path, h.score) for h in other.results] == [(h.path, h.score) for h in plain.results]
    assert all(h.breakdown.date_match is None for h in other.results)


def test_openclaw_scoring_ignores_dates(diary_engine: MemoryEngine) -> None:
    r = diary_engine.search(
        "deploy pipeline on August 20", max_results=10, min_score=0.0, record=False, scoring="openclaw"
    )
    assert r.dates == ()
    assert all(h.breakdown.date_match is None and "date" not in h.legs for h in r.results)


def test_cli_json_and_explain_show_the_dates(diary_engine: MemoryEngine, capsys: pytest.CaptureFixture[str]) -> None:
    from clawmem.program.main import main

    s = diary_engine.settings
    base = ["--home", str(s.home), "--workspace", str(s.workspace)]
    assert main([*base, "search", "deploy pipeline on August 20", "--json", "--min-score", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dates"] == ["2026-08-20 (August 20)"] and out["datedDiaries"] == 1
    first = next(h for h in out["results"] if h["path"] == "memory/2026-08-20.md")
    assert first["breakdown"]["dateMatch"] == 1.0
    assert main([*base, "search", "deploy pipeline on August 20", "--explain", "--min-score", "0"]) == 0
    text = capsys.readouterr().out
    assert "dates: 2026-08-20 (August 20) · 1 diary of them" in text
    assert "      date      1.00     of 2026-08-20, asked for" in text


def test_with_decay_on_a_diary_ages_from_the_dates_asked(diary_engine: MemoryEngine, tmp_path: Path) -> None:
    """The product default decays diaries by age; a question about August 20 asks about then."""
    home = tmp_path / "decay-home"
    home.mkdir()
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n')
    engine = MemoryEngine(make_settings(home, diary_engine.settings.workspace))
    engine.sync()
    plain = {h.path: h for h in engine.search("deploy pipeline", max_results=10, min_score=0.0, record=False).results}
    asked = engine.search("deploy pipeline on August 20", max_results=10, min_score=0.0, record=False)
    by_path = {h.path: h for h in asked.results}
    assert not engine.search("deploy pipeline", max_results=10, min_score=0.0, record=False).ages_from_dates
    assert asked.ages_from_dates
    assert plain["memory/2026-08-20.md"].breakdown.age_days == pytest.approx(77.375)  # 09:00 on Nov 5
    assert by_path["memory/2026-08-20.md"].breakdown.age_days == 0.0
    assert by_path["memory/2026-08-20.md"].breakdown.decay == 1.0
    assert by_path["memory/2026-08-18.md"].breakdown.age_days == 2.0  # before the day, too
    assert by_path["memory/2026-10-01.md"].breakdown.age_days == 42.0
    assert by_path["MEMORY.md"].breakdown.age_days is None  # evergreen stays evergreen
    assert asked.results[0].path in ("memory/2026-08-20.md", "MEMORY.md")
    assert next(h.path for h in asked.results if h.path.startswith("memory/2026")) == "memory/2026-08-20.md"
    # Without the date the newest diary wins, as decay intends.
    assert next(p for p in plain if p.startswith("memory/2026")) == "memory/2026-10-01.md"
    engine.close()


def test_vector_only_search_leaves_dates_alone(diary_engine: MemoryEngine) -> None:
    """No model here, so a vector-only request falls back to keywords; with a model it would be the
    query's meaning alone. Either way no date leg and no date concept: dates are keyword evidence."""
    from clawmem.engine.search.dated import DatedDiaries
    from clawmem.engine.search.pipeline import SearchRequest

    conn = diary_engine.store.conn()
    req = SearchRequest("deploy pipeline on August 20", 10, 0.0, legs="vector", today=TODAY)
    assert DatedDiaries.of(SqliteSearchReader(conn), req.query, req, None, 10, ["deploy"], {}, 64) == DatedDiaries()  # type: ignore[arg-type]
    req = SearchRequest("deploy pipeline on August 20", 10, 0.0, legs="hybrid", today=TODAY)
    dated = DatedDiaries.of(SqliteSearchReader(conn), req.query, req, None, 10, ["deploy"], {}, 64)  # type: ignore[arg-type]
    assert dated.match == {"memory/2026-08-20.md": 1.0} and [r.path for r in dated.rows] == ["memory/2026-08-20.md"]
