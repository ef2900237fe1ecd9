"""OpenClaw's databases: what each one's ``schema_meta`` says, and reads that refuse a shape
clawmem does not know.

Every read goes through :func:`read_checked`: it opens the file read-only
(:mod:`engine.store.openclaw.readonly`), checks ``schema_meta`` (the role this file should have,
and a schema version no newer than clawmem has read), then the tables and columns the feature
needs, and only then runs the feature's queries. A refusal is one line naming the database and
the table and column; other features of the home still open.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import apsw
from clawmem.engine.errors import ClawmemError
from clawmem.engine.store.openclaw import readonly, rows, schema
from clawmem.engine.store.openclaw.schema import SchemaRefused

T = TypeVar("T")

AGENT = "agent"
STATE = "state"
_ROLE = {AGENT: "agent", STATE: "global"}
_NEWEST = {AGENT: schema.AGENT_SCHEMA_MAX, STATE: schema.STATE_SCHEMA_MAX}


@dataclass(frozen=True)
class DatabaseInfo:
    name: str  # agent | state
    path: str
    exists: bool
    role: str | None  # schema_meta's primary row
    schema_version: int | None
    app_version: str | None  # the OpenClaw release that wrote it (first line)
    agent_id: str | None
    newest_known: int  # the newest schema version clawmem reads
    journal_mode: str | None  # wal | rollback
    read_mode: str | None  # how clawmem opens it now (engine.store.openclaw.readonly)
    size_bytes: int | None
    wal_bytes: int | None  # the -wal beside it (a running gateway), None when there is none
    problem: str | None  # why it cannot be read, in one line


def label(name: str, path: Path) -> str:
    return f"OpenClaw {name} database {path}"


def _primary(conn: apsw.Connection, name: str, path: Path) -> rows.SchemaMetaRow:
    where = label(name, path)
    schema.require(conn, schema.SCHEMA_META, where, "its schema version")
    meta = rows.schema_meta(conn)
    primary = next((m for m in meta if m.meta_key == "primary"), None)
    if primary is None:
        raise SchemaRefused(f"{where}: table schema_meta has no 'primary' row, so its schema version is unknown")
    return primary


def _fits(primary: rows.SchemaMetaRow, name: str, path: Path) -> rows.SchemaMetaRow:
    """Refuse a role or a schema version that does not fit this database."""
    where = label(name, path)
    if primary.role != _ROLE[name]:
        raise SchemaRefused(f"{where}: schema_meta.role is {primary.role!r}, expected {_ROLE[name]!r}; it is not read")
    if primary.schema_version > _NEWEST[name]:
        raise SchemaRefused(
            f"{where}: schema_meta.schema_version is {primary.schema_version}, newer than any clawmem knows "
            f"({_NEWEST[name]}); it is not read"
        )
    return primary


def read_checked(
    name: str, path: Path, needs: Mapping[str, tuple[str, ...]], what: str, fn: Callable[[apsw.Connection], T]
) -> T:
    """Run ``fn`` on the database after its ``schema_meta`` and the ``needs`` columns check out."""
    if not path.is_file():
        raise ClawmemError(f"{label(name, path)} does not exist, so {what} cannot be read")

    def checked(conn: apsw.Connection) -> T:
        _fits(_primary(conn, name, path), name, path)
        schema.require(conn, needs, label(name, path), what)
        return fn(conn)

    return readonly.read(path, checked)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def describe(name: str, path: Path) -> DatabaseInfo:
    """What the database is and says about itself; ``problem`` when it cannot be read."""
    journal: str | None = None
    mode: str | None = None
    meta: rows.SchemaMetaRow | None = None
    problem: str | None = None
    if not path.is_file():
        problem = f"{label(name, path)} does not exist"
    else:
        try:
            journal = readonly.journal_mode(path)
            mode = readonly.read_mode(path)
            meta = readonly.read(path, lambda conn: _primary(conn, name, path))
            _fits(meta, name, path)
        except ClawmemError as exc:
            problem = str(exc)
    app_lines = (meta.app_version or "").splitlines() if meta else []
    return DatabaseInfo(
        name=name,
        path=str(path),
        exists=path.is_file(),
        role=meta.role if meta else None,
        schema_version=meta.schema_version if meta else None,
        app_version=app_lines[0] if app_lines else None,
        agent_id=meta.agent_id if meta else None,
        newest_known=_NEWEST[name],
        journal_mode=journal,
        read_mode=mode,
        size_bytes=_size(path),
        wal_bytes=_size(readonly.side_file(path, "-wal")),
        problem=problem,
    )
