"""Recall signals shared by the machines of one shared index (issue 39, engine/recall_sharing.py):
searches on a laptop that has no copy of the files count for Dreaming on the machine that has
them, a query asked on two machines on one day counts once, and a forget on one machine takes
the entries out of the shared journal and out of every other machine's recall store.

Keyword-only engines on a real PostgreSQL (tests/postgres/conftest.py), real SQLite, real files.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from clawmem.engine import recall_sharing
from clawmem.engine.config import Settings
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.store import index_rows, line_vector_rows, recall_rows
from clawmem.engine.store.postgres import recall_journal, vector_rows

from tests.conftest import make_settings
from tests.session_fixture import AFTER, B_FACT, DREAM_AT, LINGYIN, RECALLS, B


def machine(home: Path, workspace: Path, url: str, schema: str) -> Settings:
    home.mkdir(parents=True, exist_ok=True)
    return make_settings(home, workspace, embedding={"provider": "none"}, store={"url": url, "schema": schema})


def at(settings: Settings, now: str) -> MemoryEngine:
    return MemoryEngine(dataclasses.replace(settings, now=now))


def journal_rows(pg_conn: Any, schema: str) -> list[tuple[str, str, str]]:
    """(machine, kind, entry key) of every journal row, oldest first."""
    pg_conn.execute(f'SET search_path TO "{schema}", public')
    rows = pg_conn.execute("SELECT machine, kind, entry_key FROM memory_recall_journal ORDER BY id").fetchall()
    pg_conn.rollback()
    return [(str(m), str(k), str(e)) for m, k, e in rows]


def lingyin_entries(e: MemoryEngine) -> list[recall_rows.RecallRow]:
    return [r for r in recall_rows.all_rows(e.store.conn()) if "Lingyin" in r.snippet]


def test_a_laptops_searches_make_dreaming_promote_on_the_machine_with_the_files_and_forget_reaches_both(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any
) -> None:
    server = machine(tmp_path / "server", workspace, pg_url, pg_schema)
    laptop = machine(tmp_path / "laptop", tmp_path / "no-files-here", pg_url, pg_schema)
    with at(server, AFTER) as e:
        e.sessions.import_file(LINGYIN, note=True)
        e.sessions.flush(B, B_FACT, date="2026-10-31")
        e.sync()
    # Only the laptop asks, on three days; the server never searches.
    for now, query in RECALLS:
        with at(laptop, now) as e:
            assert any("2026-10-31" in h.path for h in e.search(query).results), query
    with at(laptop, RECALLS[0][0]) as e:
        laptop_entries = lingyin_entries(e)
        assert laptop_entries and max(r.recall_count for r in laptop_entries) == 3
    assert {kind for _, kind, _ in journal_rows(pg_conn, pg_schema)} == {"recall"}

    with at(server, DREAM_AT) as e:
        candidates = [c for c in e.dreaming.candidates() if c.key in {r.entry_key for r in laptop_entries}]
        assert candidates, "the laptop's recalls reached the server's Dreaming"
        here = {r.entry_key: r for r in lingyin_entries(e)}
        for r in laptop_entries:  # the same signals, replayed: counts, queries, days
            assert (here[r.entry_key].recall_count, here[r.entry_key].user_query_hashes) == (
                r.recall_count,
                r.user_query_hashes,
            )
            assert here[r.entry_key].recall_days == r.recall_days
        run = e.dreaming.run(apply=True)
        assert run.applied is not None and run.applied.applied, run
        assert "Lingyin Temple tickets" in (workspace / "MEMORY.md").read_text(encoding="utf-8")

    with at(server, AFTER) as e:
        # The scenario is keyword-only, so no vector was made; stand-in rows in the shared cache,
        # keyed by the hashes of the chunks that hold the fact, are what forget must find.
        held = [
            str(r[0])
            for r in e.store.conn().execute(
                "SELECT hash FROM memory_index_chunks WHERE text LIKE ?", ("%Lingyin Temple tickets are booked%",)
            )
        ]
        assert held
        with e.runtime.shared.connection() as pg:  # type: ignore[union-attr]
            vector_rows.cache_store(pg, "llama", "m", "k", {h: b"\0" * 8 for h in held}, 2, 0.0)
        plan = e.forget.plan([B])
        assert set(plan.report()["entryKeys"]) and plan.report()["artifacts"]["shortTermEntries"] > 0
        result = e.forget.run([B], expected=plan)
        assert result.residual == () and not result.warnings, result
        assert lingyin_entries(e) == []
    # The journal keeps no observation of them, only the word that they were forgotten.
    forgotten = {key for _, kind, key in journal_rows(pg_conn, pg_schema) if kind == "forget"}
    assert {r.entry_key for r in laptop_entries} <= forgotten
    assert not any(kind == "recall" and key in forgotten for _, kind, key in journal_rows(pg_conn, pg_schema))
    assert set(held) <= {key for _, kind, key in journal_rows(pg_conn, pg_schema) if kind == "forget-text"}
    pg_conn.execute(f'SET search_path TO "{pg_schema}", public')
    assert vector_rows.cache_keys(pg_conn, held) == []  # the shared cache dropped them
    assert "Lingyin" not in json.dumps(
        pg_conn.execute("SELECT coalesce(json_agg(body), '[]') FROM memory_recall_journal").fetchone()[0]
    )
    pg_conn.rollback()
    # The laptop drops them the next time it replays (any search, or a Dreaming read).
    with at(laptop, AFTER) as e:
        assert lingyin_entries(e) == laptop_entries  # untouched until it replays
        caught = recall_sharing.catch_up(e.store.conn(), e.runtime.shared)  # type: ignore[arg-type]
        assert caught.forgotten == len(laptop_entries)
        assert lingyin_entries(e) == []
        assert e.search("Lingyin Temple tickets").results == ()


def test_one_query_on_two_machines_on_one_day_counts_once_and_a_replay_is_idempotent(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any
) -> None:
    a_settings = machine(tmp_path / "a", workspace, pg_url, pg_schema)
    b_settings = machine(tmp_path / "b", tmp_path / "none", pg_url, pg_schema)
    day = "2026-11-01T10:00:00+00:00"
    query = "Lingyin Temple tickets"
    with at(a_settings, day) as a:
        a.sessions.import_file(LINGYIN, note=True)
        a.sessions.flush(B, B_FACT, date="2026-10-31")
        a.search(query)
        mine = lingyin_entries(a)
        assert mine and {r.recall_count for r in mine} == {1}
    with at(b_settings, day.replace("10:00", "15:00")) as b:
        b.search(query)  # the same query, later that day, elsewhere
        b.search("tickets booked Saturday")  # another query
        theirs = {r.entry_key: r for r in lingyin_entries(b)}
    with at(a_settings, day.replace("10:00", "16:00")) as a:
        conn = a.store.conn()
        shared = a.runtime.shared
        assert shared is not None
        caught = recall_sharing.catch_up(conn, shared)
        assert caught.observations > 0
        here = {r.entry_key: r for r in lingyin_entries(a)}
        for key, r in theirs.items():
            assert here[key].recall_count == r.recall_count  # the repeated query counted once on both
            assert len(here[key].user_query_hashes) == r.recall_count
        assert recall_sharing.catch_up(conn, shared) == recall_sharing.CatchUp(0, 0, 0)  # the cursor moved on
        # Replaying the whole journal again (a lost cursor) changes no count.
        conn.execute("UPDATE recall_journal_cursor SET last_id = 0")
        again = recall_sharing.catch_up(conn, shared)
        assert again.observations == caught.observations and again.changed == 0
        assert {r.entry_key: r.recall_count for r in lingyin_entries(a)} == {k: r.recall_count for k, r in here.items()}
        observations, machines = recall_sharing.summary(shared)
        assert machines == 2 and observations >= len(theirs) + len(mine)


def test_a_journal_row_this_clawmem_cannot_read_is_skipped_not_guessed(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, pg_conn: Any
) -> None:
    settings = machine(tmp_path / "a", workspace, pg_url, pg_schema)
    with at(settings, AFTER) as e:
        e.sync()
        shared = e.runtime.shared
        assert shared is not None
        whole = {
            "queryHash": "q",
            "day": "2026-11-05",
            "at": 0,
            "interactive": True,
            "path": "memory/2026-10-31.md",
            "startLine": 1,
            "endLine": 2,
            "snippet": "a line",
            "score": 0.5,
            "originClass": "agent",
            "sessionKind": "interactive",
            "projectKey": None,
        }
        with shared.connection() as pg:
            recall_journal.append(
                pg,
                "newer-machine",
                0,
                [
                    ("recall", "memory:x:1:2:abc", {"future": True}),
                    ("recall", "memory:y:1:2:abc", {"queryHash": "q", "originClass": "alien"}),
                    ("recall", "memory:z:1:2:abc", {**whole, "sessionKind": "a kind from the future"}),
                ],
            )
        caught = recall_sharing.catch_up(e.store.conn(), shared)
        assert (caught.observations, caught.changed) == (3, 0)
        assert recall_rows.all_rows(e.store.conn()) == []


def test_the_journal_keeps_its_newest_rows(pg_conn: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(recall_journal, "KEEP", 3)
    for n in range(5):
        recall_journal.append(pg_conn, "m", n, [("recall", f"memory:k{n}", {})])
    assert [r.entry_key for r in recall_journal.since(pg_conn, 0, "other")] == ["memory:k2", "memory:k3", "memory:k4"]
    assert recall_journal.since(pg_conn, 0, "m") == []  # a machine never replays its own rows


def test_a_forgotten_texts_vectors_leave_every_machines_cache_when_it_replays(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str
) -> None:
    a_settings = machine(tmp_path / "a", workspace, pg_url, pg_schema)
    b_settings = machine(tmp_path / "b", tmp_path / "none", pg_url, pg_schema)
    with at(b_settings, AFTER) as b:
        conn = b.store.conn()
        with conn:  # vectors this machine made once, of a text forgotten elsewhere and of another
            for h in ("forgotten", "kept"):
                index_rows.cache_store(conn, "llama", "m", "k", h, b"\0" * 8, 2, 0.0)
            line_vector_rows.store(conn, "forgotten", "k", b"\0" * 8, b"")
    with at(a_settings, AFTER) as a:
        recall_sharing.forget(a.store.conn(), a.runtime.shared, [], ["forgotten"], 0)  # type: ignore[arg-type]
    with at(b_settings, AFTER) as b:
        conn = b.store.conn()
        recall_sharing.catch_up(conn, b.runtime.shared)  # type: ignore[arg-type]
        assert [r.hash for r in index_rows.cache_rows(conn, ["forgotten", "kept"])] == ["kept"]
        assert line_vector_rows.for_hashes(conn, ["forgotten"], "k") == {}


def test_a_search_whose_recall_cannot_reach_the_journal_still_answers_and_says_so(
    tmp_path: Path, workspace: Path, pg_url: str, pg_schema: str, monkeypatch: Any
) -> None:
    from clawmem.engine.store.postgres.connect import StoreUnavailable

    def lost(*_args: object) -> int:
        # A stand-in: the server cannot be made to vanish between a search's read and its append.
        raise StoreUnavailable("lost PostgreSQL at test: the connection was reset")

    with at(machine(tmp_path / "a", workspace, pg_url, pg_schema), AFTER) as e:
        e.sessions.import_file(LINGYIN, note=True)
        e.sessions.flush(B, B_FACT, date="2026-10-31")
        monkeypatch.setattr(recall_journal, "append", lost)
        r = e.search("Lingyin Temple tickets")
        assert r.results
        assert any("kept on this machine only (lost PostgreSQL at test" in w for w in r.warnings), r.warnings
        assert lingyin_entries(e)  # recorded here all the same
