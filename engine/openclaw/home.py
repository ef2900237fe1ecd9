"""``OpenClawHome``: the read-only facade over one agent of an OpenClaw home, for the CLI and the
TUI (the Status and Sessions panes render what it returns).

Nothing here writes a byte of OpenClaw's: the databases are read through
:mod:`engine.store.openclaw.readonly`, the workspace files are only hashed. Each method reads
afresh (OpenClaw may be running), and each feature fails alone: :meth:`status` collects what
could not be read as one-line ``problems`` instead of raising, while :meth:`index_report`,
:meth:`sessions` and :meth:`session` raise a one-line :class:`~engine.errors.ClawmemError` when the
database cannot give them what they need.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TypeVar

import apsw
from clawmem.engine.config import Clock
from clawmem.engine.errors import ClawmemError
from clawmem.engine.openclaw import databases, dreaming, intents, jobs, sessions
from clawmem.engine.openclaw.databases import DatabaseInfo
from clawmem.engine.openclaw.discovery import Discovery, discover
from clawmem.engine.openclaw.dreaming import OpenClawCandidate, OpenClawDreaming
from clawmem.engine.openclaw.index_report import IndexReport, build_report
from clawmem.engine.openclaw.intents import OpenClawIntent, OpenClawMatch
from clawmem.engine.openclaw.jobs import OpenClawJob
from clawmem.engine.openclaw.sessions import OpenClawSession, OpenClawSessionDetail
from clawmem.engine.store.openclaw import rows, schema

T = TypeVar("T")


@dataclass(frozen=True)
class SessionCounts:
    sessions: int
    events: int


@dataclass(frozen=True)
class OpenClawStatus:
    """Everything ``status --openclaw`` and the Status pane show about the home."""

    state_dir: str
    agent_id: str
    agents: tuple[str, ...]
    config_path: str
    config_read: bool
    workspace: str
    workspace_from: str
    workspace_exists: bool
    agent_db_from: str
    owners: tuple[str, ...]  # commands.ownerAllowFrom
    databases: tuple[DatabaseInfo, ...]  # agent, state
    index: IndexReport | None  # None: see problems
    sessions: SessionCounts | None  # None: see problems
    problems: tuple[str, ...]  # what could not be read and why, one line each


class OpenClawHome:
    """One agent of an OpenClaw home, read in place."""

    def __init__(self, found: Discovery) -> None:
        self.found = found

    @classmethod
    def open(cls, home: Path | str | None, agent_id: str = "main") -> OpenClawHome:
        """Discover the home (``None``: the default ``~/.openclaw``); one-line error without one."""
        return cls(discover(home, agent_id))

    @property
    def workspace(self) -> Path:
        return self.found.workspace

    @property
    def agent_id(self) -> str:
        return self.found.agent_id

    # ------------------------------------------------------------------------------ databases

    def databases(self) -> tuple[DatabaseInfo, ...]:
        return (
            databases.describe(databases.AGENT, self.found.agent_db),
            databases.describe(databases.STATE, self.found.state_db),
        )

    def _state(self, needs: Mapping[str, tuple[str, ...]], what: str, fn: Callable[[apsw.Connection], T]) -> T:
        return databases.read_checked(databases.STATE, self.found.state_db, needs, what, fn)

    def _agent(self, needs: Mapping[str, tuple[str, ...]], what: str, fn: Callable[[apsw.Connection], T]) -> T:
        return databases.read_checked(databases.AGENT, self.found.agent_db, needs, what, fn)

    # ------------------------------------------------------------------------------ the index

    def index_report(self) -> IndexReport:
        """The agent's memory index against the workspace files (see :mod:`.index_report`)."""

        def read(
            conn: apsw.Connection,
        ) -> tuple[dict[str, str], int | None, list[rows.SourceRow], dict[tuple[str, str], int]]:
            return rows.index_meta(conn), rows.index_revision(conn), rows.index_sources(conn), rows.chunk_counts(conn)

        meta, revision, sources, chunks = self._agent(schema.INDEX, "its memory index", read)
        f = self.found
        return build_report(f.agent_id, f.workspace, f.state_dir, f.config, meta, revision, sources, chunks)

    # ------------------------------------------------------------------------------ sessions

    def sessions(self) -> tuple[OpenClawSession, ...]:
        """Every session in the agent database, newest first, with sender, channel and trust."""
        return tuple(d.summary for d in self._details(None))

    def _details(self, session_ids: Sequence[str] | None) -> tuple[OpenClawSessionDetail, ...]:
        """These sessions (None: every one), newest first, with their decoded, classified events."""
        wanted = None if session_ids is None else set(session_ids)

        def read(conn: apsw.Connection) -> tuple[list[rows.WindowRow], list[rows.EventRow]]:
            chosen = [w for w in rows.windows(conn) if wanted is None or w.session_id in wanted]
            return chosen, rows.events(conn, None if wanted is None else [w.session_id for w in chosen])

        windows, events = self._agent(schema.SESSIONS, "its sessions", read)
        by_session: dict[str, list[rows.EventRow]] = {}
        for e in events:
            by_session.setdefault(e.session_id, []).append(e)
        return tuple(self._detail(w, by_session.get(w.session_id, [])) for w in windows)

    def _detail(self, window: rows.WindowRow, events: list[rows.EventRow]) -> OpenClawSessionDetail:
        evs, senders = sessions.read_events(sessions.session_kind(window.session_key), events, self.found.config)
        return OpenClawSessionDetail(sessions.summarize(window, evs, senders), tuple(evs))

    def transcript_stamps(self) -> dict[str, int]:
        """Each session's last change (epoch ms): what clawmem's sessions index compares, so an
        unchanged session is not decoded again."""
        return self._agent(schema.SESSIONS, "its sessions", rows.transcript_stamps)

    def transcripts(self, session_ids: Sequence[str]) -> tuple[OpenClawSessionDetail, ...]:
        """These sessions with their decoded, classified events (ids the home lacks are left out)."""
        return self._details(session_ids)

    def find_session(self, selector: str) -> OpenClawSessionDetail | None:
        """A session by exact id or key (None when this home has no such session)."""
        text = selector.strip()

        def read(conn: apsw.Connection) -> tuple[rows.WindowRow | None, list[rows.EventRow], int]:
            all_windows = rows.windows(conn)
            matches = [w for w in all_windows if w.session_id == text] or [
                w for w in all_windows if w.session_key == text
            ]
            if len(matches) != 1:
                return None, [], len(matches)
            return matches[0], rows.events(conn, [matches[0].session_id]), 1

        window, events, n = self._agent(schema.SESSIONS, "its sessions", read)
        if n > 1:
            raise ClawmemError(
                f"key {text!r} matches {n} OpenClaw sessions; give a session id (see `clawmem session list`)"
            )
        return None if window is None else self._detail(window, events)

    def session(self, selector: str) -> OpenClawSessionDetail:
        detail = self.find_session(selector)
        if detail is None:
            raise ClawmemError(f"no OpenClaw session {selector.strip()!r}; see `clawmem session list`")
        return detail

    def session_counts(self) -> SessionCounts:
        def read(conn: apsw.Connection) -> SessionCounts:
            return SessionCounts(rows.table_count(conn, "session_windows"), rows.table_count(conn, "transcript_events"))

        needs = {table: () for table in schema.SESSIONS}
        return self._agent(needs, "its sessions", read)

    # ------------------------------------------------------------------------------ dreaming

    def dreaming(self, clock: Clock) -> OpenClawDreaming:
        """What Deep would promote tonight from the agent's recall store, every gate explained
        (see :mod:`.dreaming`); a one-line error when the state database cannot give it."""

        def read(conn: apsw.Connection) -> list[rows.PluginStateRow]:
            return rows.plugin_state(conn, dreaming.PLUGIN, dreaming.NAMESPACES)

        entries = databases.read_checked(
            databases.STATE, self.found.state_db, schema.DREAMING, "its Dreaming recall store", read
        )
        now_ms = int(clock.timestamp() * 1000)
        return dreaming.evaluate(entries, self.found.workspace, self.found.state_dir.parent, now_ms)

    def dream_candidate(self, selector: str, clock: Clock) -> OpenClawCandidate | None:
        """One of the agent's recall entries by key, ``path:line`` or unique key prefix (None: no such entry)."""
        return dreaming.find(self.dreaming(clock), selector)

    # ------------------------------------------------------------------------------ intents

    def intents(self, now: datetime) -> tuple[OpenClawIntent, ...]:
        """Its standing intents, oldest first, with fires left and cooldown as of ``now``."""
        found = self._agent(schema.INTENTS, "its standing intents", rows.standing_intents)
        now_ms = round(now.timestamp() * 1000)
        return tuple(intents.decode(r, now_ms) for r in found)

    def find_intent(self, selector: str, now: datetime) -> OpenClawIntent | None:
        """An intent by id or a unique prefix (≥ 6 characters); None when this home has none."""
        text = selector.strip().lower()
        every = self.intents(now)
        exact = [i for i in every if i.id.lower() == text]
        if exact or len(text) < 6:
            return exact[0] if exact else None
        prefixed = [i for i in every if i.id.lower().startswith(text)]
        if len(prefixed) > 1:
            raise ClawmemError(f"{selector.strip()!r} matches {len(prefixed)} OpenClaw intents; give more of the id")
        return prefixed[0] if prefixed else None

    def simulate_intents(
        self, message: str, *, channel: str | None, sender: str | None, now: datetime, tz: tzinfo = UTC
    ) -> OpenClawMatch:
        """Would ``message`` fire each intent now, and which gate decides; reads only, writes nothing."""
        return intents.simulate(self.intents(now), message, channel=channel, sender=sender, at=now, tz=tz)

    # ------------------------------------------------------------------------------ jobs

    def jobs(self) -> tuple[OpenClawJob, ...]:
        """The gateway's scheduled jobs (state DB ``cron_jobs``) in OpenClaw's order."""
        return tuple(jobs.decode(r) for r in self._state(schema.JOBS, "its scheduled jobs", rows.cron_jobs))

    # ------------------------------------------------------------------------------ status

    def status(self) -> OpenClawStatus:
        """What was found, each database's schema_meta, the index report and session counts;
        everything that could not be read is in ``problems`` (one line each)."""
        f = self.found
        problems = list(f.notes)
        dbs = self.databases()
        problems += [d.problem for d in dbs if d.problem]
        agent_ok = not dbs[0].problem
        index: IndexReport | None = None
        counts: SessionCounts | None = None
        if agent_ok:
            try:
                index = self.index_report()
            except ClawmemError as exc:
                problems.append(str(exc))
            try:
                counts = self.session_counts()
            except ClawmemError as exc:
                problems.append(str(exc))
        if not f.workspace.is_dir():
            problems.append(f"the workspace {f.workspace} (from {f.workspace_from}) does not exist")
        return OpenClawStatus(
            state_dir=str(f.state_dir),
            agent_id=f.agent_id,
            agents=f.agents,
            config_path=str(f.config_path),
            config_read=f.config is not None,
            workspace=str(f.workspace),
            workspace_from=f.workspace_from,
            workspace_exists=f.workspace.is_dir(),
            agent_db_from=f.agent_db_from,
            owners=f.config.owner_allow_from if f.config else (),
            databases=dbs,
            index=index,
            sessions=counts,
            problems=tuple(dict.fromkeys(problems)),
        )
