"""Recall signals shared by every machine on one shared index (issue 39; README "One memory for
several machines").

Dreaming promotes what searches keep finding, and its state (runs, proposals, phase hits,
promotions) stays in each machine's SQLite, updated in the same transactions as the recall
rows. So the recall rows stay there too, and what the machines share is how they grow: each
search's observations (engine/recall.py :class:`Observation`) are applied here and appended to
the shared journal (engine/store/postgres/recall_journal.py); before Dreaming reads the recall
store, and after each search, a machine replays the other machines' observations after its
cursor through the same :func:`apply_observations`. The once-per-query-per-day rule makes the
replay idempotent: a query asked on two machines on one day counts once, as on one machine.

A forget removes its entries here, deletes their observations from the journal and leaves
``forget`` rows, so every other machine drops those entries when it next replays, and
``forget-text`` rows, so each drops the forgotten texts' cached and line vectors too.
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import apsw
from clawmem.engine.recall import Observation, apply_observations
from clawmem.engine.store import index_rows, line_vector_rows, recall_cursor_rows, recall_rows
from clawmem.engine.store.db import immediate
from clawmem.engine.store.postgres import recall_journal
from clawmem.engine.store.postgres.shared import SharedIndex

BATCH = 1_000  # journal rows replayed per round trip


@dataclass(frozen=True)
class CatchUp:
    """What one replay brought in (``forget-text`` rows are read, not counted apart)."""

    observations: int  # other machines' observations read
    changed: int  # recall entries they added to or created here
    forgotten: int  # entries another machine forgot, dropped here


def _new_name() -> str:
    """A name for this machine in a journal: its host name (for people) and a random part."""
    return f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"


def _machine(local: apsw.Connection, shared: SharedIndex) -> tuple[str, int]:
    """This machine's name in the shared journal and its cursor, made on first use."""
    found = recall_cursor_rows.get(local, shared.key)
    if found is not None:
        return found
    with immediate(local):
        recall_cursor_rows.create(local, shared.key, _new_name())
    found = recall_cursor_rows.get(local, shared.key)
    assert found is not None
    return found


def record(local: apsw.Connection, shared: SharedIndex, observations: Sequence[Observation], at: int) -> int:
    """Apply one search's observations here, journal them for the other machines, then replay
    theirs; how many entries changed here."""
    changed = apply_observations(local, observations)
    machine, _ = _machine(local, shared)
    with shared.connection() as pg:
        recall_journal.append(pg, machine, at, [("recall", ob.key, ob.to_json()) for ob in observations])
    return changed + catch_up(local, shared).changed


def catch_up(local: apsw.Connection, shared: SharedIndex) -> CatchUp:
    """Replay the other machines' journal rows after this machine's cursor, in order."""
    known = recall_cursor_rows.get(local, shared.key)
    # Before this machine's first append it has no rows of its own to skip and no cursor yet; one
    # is made only when there is something to replay (a replay of nothing writes nothing).
    machine, after = known if known is not None else ("", 0)
    read = changed = forgotten = 0
    with shared.connection() as pg:
        while True:
            rows = recall_journal.since(pg, after, machine, BATCH)
            if not rows:
                break
            with immediate(local):
                pending: list[Observation] = []
                for row in rows:
                    if row.kind == "recall":
                        try:
                            pending.append(Observation.from_json(row.body))
                        except (KeyError, TypeError, ValueError):
                            continue  # a row this clawmem cannot read (a newer one's): never guess
                        continue
                    changed += apply_observations(local, pending)
                    pending = []
                    if row.kind == "forget-text":
                        index_rows.delete_cache_hashes(local, [row.entry_key])
                        line_vector_rows.delete_hashes_present(local, [row.entry_key])
                    elif row.kind == "forget" and recall_rows.get(local, row.entry_key) is not None:
                        recall_rows.delete_recall(local, [row.entry_key])
                        forgotten += 1
                changed += apply_observations(local, pending)
                after = rows[-1].id
                if known is None:
                    machine = _new_name()
                    recall_cursor_rows.create(local, shared.key, machine)
                    known = (machine, 0)
                recall_cursor_rows.advance(local, shared.key, after)
            read += len(rows)
    return CatchUp(read, changed, forgotten)


def forget(
    local: apsw.Connection, shared: SharedIndex, entry_keys: Iterable[str], text_hashes: Iterable[str], at: int
) -> None:
    """Entries and texts forgotten here (already deleted from this machine's stores): the
    entries' observations leave the journal, and ``forget`` and ``forget-text`` rows tell the
    other machines to drop the entries and the texts' cached and line vectors."""
    rows: list[tuple[str, str, Mapping[str, object]]] = [("forget", key, {}) for key in dict.fromkeys(entry_keys)]
    rows += [("forget-text", h, {}) for h in dict.fromkeys(text_hashes)]
    if not rows:
        return
    machine, _ = _machine(local, shared)
    with shared.connection() as pg:
        recall_journal.append(pg, machine, at, rows)


def residual(shared: SharedIndex, entry_keys: Sequence[str]) -> dict[str, int]:
    """Entry key -> observations of it still in the shared journal (forget's check after)."""
    with shared.connection() as pg:
        return recall_journal.observations_of(pg, entry_keys)


def summary(shared: SharedIndex) -> tuple[int, int]:
    """(observations in the shared journal, machines that made them)."""
    with shared.connection() as pg:
        return recall_journal.summary(pg)
