"""Full rebuild into a shadow database, then an atomic publish (docs/memory-core.md §3 "Full rebuild").

1. Remember the live ``memory_index_state.revision``.
2. Build a temp DB at ``<db>.memory-reindex-<uuid>``, seeded with the live embedding cache.
3. Index every file into it and write the new identity.
4. Publish the derived tables into the live DB in one short transaction, guarded by the
   remembered revision; if anything changed the live index meanwhile, nothing is replaced.

Searches keep using the old index the whole time; a failure, cancel or kill leaves it intact
(the temp file is removed, or swept on the next rebuild).
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import apsw
from clawmem.engine.config import Clock, Settings
from clawmem.engine.errors import ClawmemError
from clawmem.engine.index.identity import IndexIdentity
from clawmem.engine.index.sync import (
    EmbedderIdentity,
    OriginResolver,
    Progress,
    TextSyncStats,
    default_origin,
    sync_text,
)
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store import shadow
from clawmem.engine.store.shadow import RebuildRaced  # noqa: F401 - re-exported
from clawmem.engine.workspace.files import MemoryFile


class RebuildCancelled(ClawmemError):
    """The rebuild was cancelled; the old index is untouched."""


@dataclass(frozen=True)
class RebuildResult:
    stats: TextSyncStats
    published: bool


def shadow_path(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.name}.memory-reindex-{uuid.uuid4().hex}")


def sweep_stale_shadows(db_path: Path) -> int:
    """Remove temp databases left behind by a killed rebuild."""
    removed = 0
    for stale in db_path.parent.glob(f"{db_path.name}.memory-reindex-*"):
        with contextlib.suppress(OSError):
            stale.unlink()
            removed += 1
    return removed


def shadow_rebuild(
    live: apsw.Connection,
    db_path: Path,
    settings: Settings,
    clock: Clock,
    files: Sequence[MemoryFile],
    *,
    identity: IndexIdentity,
    embedder: EmbedderIdentity | None,
    vec: bool,
    origin: OriginResolver = default_origin,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    before_publish: Callable[[apsw.Connection], None] | None = None,
) -> RebuildResult:
    sweep_stale_shadows(db_path)
    expected_revision = rows.revision(live)
    temp_path = shadow_path(db_path)
    temp, vec_error = shadow.open_shadow(
        temp_path, tokenizer=settings.index.fts_tokenizer, dims=embedder.dims if (vec and embedder) else None
    )
    vec = vec and vec_error is None
    try:
        if embedder is not None:
            shadow.seed_cache(temp, db_path)
        stats = sync_text(
            temp,
            settings,
            clock,
            files,
            embedder=embedder,
            vec=vec and embedder is not None,
            force=True,
            origin=origin,
            progress=progress,
            cancel=cancel,
        )
        if stats.cancelled or (cancel is not None and cancel.is_set()):
            raise RebuildCancelled("rebuild cancelled; the previous index is unchanged")
        if before_publish is not None:
            before_publish(temp)
            if cancel is not None and cancel.is_set():
                raise RebuildCancelled("rebuild cancelled; the previous index is unchanged")
        with temp:
            rows.set_meta(temp, "identity", identity.to_json())
        temp.close()
        if progress:
            progress("publish", 0, 1)
        shadow.publish(
            live,
            temp_path,
            expected_revision,
            settings.index.fts_tokenizer,
            embedder.dims if (embedder and vec) else None,
        )
        if progress:
            progress("publish", 1, 1)
        return RebuildResult(stats=stats, published=True)
    finally:
        with contextlib.suppress(apsw.Error):
            temp.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                Path(f"{temp_path}{suffix}").unlink()
