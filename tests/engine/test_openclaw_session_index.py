"""OpenClaw's sessions in clawmem's ``sessions`` search source, read in place from a copy of the
real home (tests/fixtures/openclaw-home): indexed as ``sessions/openclaw/<id>.jsonl`` with the
classes clawmem derives, only a changed session decoded again, kept when the home is not open or
cannot be read — and not one byte of OpenClaw's changed."""

from __future__ import annotations

import json
from pathlib import Path

from clawmem.engine.config import load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.engine.sessions import index as session_index
from clawmem.engine.store import index_rows

from tests.openclaw_fixture import LIN, SAM, agent_db, alter, digest

SESSIONS_ON = '[index]\nsources = ["memory", "sessions"]\n'


def open_engine(openclaw_home: Path, tmp_path: Path, *, with_home: bool = True) -> MemoryEngine:
    home = tmp_path / "clawmem"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(SESSIONS_ON, encoding="utf-8")
    theirs = OpenClawHome.open(openclaw_home)
    settings = load_settings(home=home, workspace=theirs.workspace)
    return MemoryEngine(settings, provider=None, openclaw=theirs if with_home else None)


def session_ids(openclaw_home: Path) -> dict[str, str]:
    """session key → id, from the home as OpenClaw wrote it."""
    return {s.session_key: s.session_id for s in OpenClawHome.open(openclaw_home).sessions()}


def indexed_paths(engine: MemoryEngine) -> set[str]:
    return set(index_rows.sources(engine.store.conn(), session_index.SOURCE))


def resync(engine: MemoryEngine) -> int:
    """One pass of the sessions source alone, as a sync makes it; returns sessions written."""
    conn = engine.store.conn()
    return session_index.sync_sessions(
        conn, conn, engine.settings, engine.clock, embedder=None, openclaw=engine.openclaw
    )


def hits(engine: MemoryEngine, query: str) -> list:  # type: ignore[type-arg]
    r = engine.search(query, sources=("sessions",), record=False, sync=False)
    return [*r.results, *r.near_misses]


def test_the_agents_sessions_are_searchable_with_their_trust(openclaw_home: Path, tmp_path: Path) -> None:
    before = digest(openclaw_home)
    ids = session_ids(openclaw_home)
    with open_engine(openclaw_home, tmp_path) as e:
        report = e.sync()
        assert report.warnings == ()
        assert indexed_paths(e) == {session_index.openclaw_session_path(i) for i in ids.values()}
        found = hits(e, "remind me whenever I mention the office")
        assert found, "Lin's request is in her session"
        best = max(found, key=lambda h: h.score)
        assert session_index.session_id_of(best.path) == ids[LIN]
        assert all(h.path.startswith("sessions/openclaw/") and h.source == "sessions" for h in found)
        # The reply Sam got after the agent fetched a web page (external untrusted content) is
        # tainted, and Sam is not the owner: untrusted.
        tainted = [h for h in hits(e, "payments API is degraded") if session_index.session_id_of(h.path) == ids[SAM]]
        assert tainted and all(h.provenance.origin_class == "untrusted" for h in tainted)
        assert all(h.provenance.session_kind == "interactive" for h in found)
        # Line N is the event of seq N-1 (OpenClaw counts from 0): Lin's request is seq 1, line 2.
        lines = best.snippet.splitlines()
        assert best.start_line == 1 and lines[0] == "" and lines[1].startswith("user: Please remind me whenever")
    assert digest(openclaw_home) == before


def test_only_a_changed_session_is_read_again(openclaw_home: Path, tmp_path: Path) -> None:
    ids = session_ids(openclaw_home)
    with open_engine(openclaw_home, tmp_path) as e:
        e.sync()
        assert resync(e) == 0  # nothing moved: nothing decoded or rewritten
        assert hits(e, "Lingyin temple") == []
        event = {
            "type": "message",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "We also booked the Lingyin temple tour."}],
            },
        }
        # OpenClaw appends an event to Lin's session (as the gateway would while clawmem is open).
        alter(
            agent_db(openclaw_home),
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
            f"VALUES ('{ids[LIN]}', 26, '{json.dumps(event)}', 1796455999000)",
        )
        assert resync(e) == 1
        new = hits(e, "Lingyin temple")
        assert [session_index.session_id_of(h.path) for h in new] == [ids[LIN]]
        assert resync(e) == 0


def test_indexed_transcripts_stay_when_the_home_is_not_open_or_cannot_be_read(
    openclaw_home: Path, tmp_path: Path
) -> None:
    with open_engine(openclaw_home, tmp_path) as e:
        e.sync()
        theirs = indexed_paths(e)
    assert len(theirs) == 3
    with open_engine(openclaw_home, tmp_path, with_home=False) as e:  # a plain `clawmem index`
        e.sync()
        assert indexed_paths(e) == theirs
    alter(agent_db(openclaw_home), "UPDATE schema_meta SET schema_version = 99")
    with open_engine(openclaw_home, tmp_path) as e:
        report = e.sync()
        assert len(report.warnings) == 1
        assert report.warnings[0].startswith("OpenClaw's sessions are not indexed: ")
        assert "schema_meta.schema_version is 99" in report.warnings[0]
        assert indexed_paths(e) == theirs
        # A rebuild indexes what it can read now: without their sessions, until the home reads again.
        e.sync(force=True)
        assert indexed_paths(e) == set()
    alter(agent_db(openclaw_home), "UPDATE schema_meta SET schema_version = 23")
    with open_engine(openclaw_home, tmp_path) as e:
        e.sync()
        assert indexed_paths(e) == theirs


def test_a_session_gone_from_the_home_leaves_the_index(openclaw_home: Path, tmp_path: Path) -> None:
    ids = session_ids(openclaw_home)
    with open_engine(openclaw_home, tmp_path) as e:
        e.sync()
        alter(
            agent_db(openclaw_home),
            f"DELETE FROM transcript_events WHERE session_id = '{ids[SAM]}'",
            f"DELETE FROM session_windows WHERE session_id = '{ids[SAM]}'",
        )
        e.sync()
        assert session_index.openclaw_session_path(ids[SAM]) not in indexed_paths(e)
        assert len(indexed_paths(e)) == 2
