"""The text phase of indexing: files → chunks, FTS rows, provenance and recall metadata.

It is fast (no model involved): keyword search is complete as soon as it finishes. Vectors
already known for a chunk's text (the embedding cache) are attached on the way; the rest are
left for the background embedding pass (:mod:`engine.index.embedding_pass`).

Per file: an mtime/size pre-check, then a SHA-256 skip, then re-chunking in one transaction.
A file that cannot be read is skipped with a reason; nothing aborts the whole sync.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import apsw
from clawmem.engine.config import Clock, Settings
from clawmem.engine.index.chunking import chunk_id, chunk_memory_file
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store.db import immediate
from clawmem.engine.workspace.annotations import find_supersedes
from clawmem.engine.workspace.files import MemoryFile
from clawmem.engine.workspace.reading import FileText, read_memory_text

Progress = Callable[[str, int, int], None]  # (phase, done, total)
OriginResolver = Callable[[MemoryFile, int, int], str]  # (file, start_line, end_line) -> class


@dataclass(frozen=True)
class EmbedderIdentity:
    """What cached vectors are keyed by (spec: provider, model, provider_key, text hash)."""

    provider: str
    model: str
    provider_key: str
    dims: int


@dataclass
class TextSyncStats:
    files: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_written: int = 0
    cache_hits: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    cancelled: bool = False


def default_origin(file: MemoryFile, start: int, end: int) -> str:
    return file.path_origin


def sync_text(
    conn: apsw.Connection,
    settings: Settings,
    clock: Clock,
    files: Sequence[MemoryFile],
    *,
    embedder: EmbedderIdentity | None,
    vec: bool,
    only: set[str] | None = None,
    force: bool = False,
    origin: OriginResolver = default_origin,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> TextSyncStats:
    """Bring the index's text rows in line with ``files`` (all, or just ``only``)."""
    stats = TextSyncStats()
    indexed = [f for f in files if f.indexed]
    known = rows.sources(conn)
    present = {f.rel for f in indexed}
    targets = [f for f in indexed if only is None or f.rel in only]
    stats.files = len(indexed)
    now = clock.timestamp()

    # Files gone from disk (or no longer indexable) lose their rows.
    for rel in sorted(set(known) - present):
        if only is not None and rel not in only:
            continue
        with immediate(conn):
            rows.delete_source(conn, rel, "memory")
            rows.clear_skipped(conn, rel)
        stats.removed += 1
    if only is None:
        with immediate(conn):
            for path, _ in rows.skipped(conn):
                if path not in present:
                    rows.clear_skipped(conn, path)

    for done, file in enumerate(targets, start=1):
        if cancel is not None and cancel.is_set():
            stats.cancelled = True
            break
        if progress:
            progress("text", done, len(targets))
        prior = known.get(file.rel)
        if (
            not force
            and prior is not None
            and prior.hash
            and abs(prior.mtime - file.mtime) < 1e-6
            and prior.size == file.size
        ):
            stats.unchanged += 1
            continue
        read = read_memory_text(file.path, file.rel, settings.index.max_file_bytes)
        if not isinstance(read, FileText):
            stats.skipped.append((file.rel, read.reason))
            with immediate(conn):
                rows.delete_source(conn, file.rel, "memory")
                rows.set_skipped(conn, file.rel, read.reason, file.size, now)
            continue
        if not force and prior is not None and prior.hash == read.raw_sha256:
            with immediate(conn):
                rows.touch_source(conn, file.rel, "memory", read.mtime, read.size)
                rows.clear_skipped(conn, file.rel)
            stats.unchanged += 1
            continue
        written, hits = _index_file(conn, settings, file, read, embedder=embedder, vec=vec, now=now, origin=origin)
        stats.changed += 1
        stats.chunks_written += written
        stats.cache_hits += hits
    return stats


def _index_file(
    conn: apsw.Connection,
    settings: Settings,
    file: MemoryFile,
    read: FileText,
    *,
    embedder: EmbedderIdentity | None,
    vec: bool,
    now: float,
    origin: OriginResolver,
) -> tuple[int, int]:
    chunks = chunk_memory_file(
        read.text,
        file.rel,
        tokens=settings.index.chunk_tokens,
        overlap=settings.index.chunk_overlap,
        curated_root=file.curated_root,
    )
    source_lines = read.text.split("\n")
    observed_ms = int(read.mtime * 1000)
    new = []
    seen_ids: set[str] = set()
    for c in chunks:
        cid = chunk_id("memory", file.rel, c.start_line, c.end_line, c.hash)
        if cid in seen_ids:
            continue
        seen_ids.add(cid)
        span_text = "\n".join(source_lines[c.span[0] - 1 : c.span[1]])
        new.append(
            rows.NewChunk(
                id=cid,
                path=file.rel,
                source="memory",
                start_line=c.start_line,
                end_line=c.end_line,
                hash=c.hash,
                text=c.text,
                origin_class=origin(file, c.start_line, c.end_line),
                session_kind="unknown",
                observed_at=observed_ms,
                supersedes_key=find_supersedes(span_text),
                importance=c.metadata.importance,
                triggers=c.metadata.triggers,
                project_key=c.metadata.project_key,
            )
        )
    with immediate(conn):
        cached = (
            rows.cache_lookup(
                conn, embedder.provider, embedder.model, embedder.provider_key, [c.hash for c in new], now
            )
            if embedder is not None
            else {}
        )
        rows.delete_chunks_for_path(conn, file.rel, "memory")
        hits = rows.insert_chunks(
            conn, new, now=now, embeddings=cached, model=embedder.model if embedder else "fts-only", vec=vec
        )
        rows.upsert_source(conn, file.rel, "memory", read.raw_sha256, read.mtime, read.size)
        rows.clear_skipped(conn, file.rel)
    return len(new), hits
