"""The spec's ``sessions`` index source: transcripts as searchable chunks, never for tombstoned sessions.

Off by default (``index.sources = ["memory"]``); with ``"sessions"`` in the list, every sync brings
the ``sessions`` rows in line with the imported transcripts. Each session becomes the virtual
path ``sessions/<session_id>.jsonl`` rendered one event per line (``role: text``), so line N is
event N. A chunk's provenance is the least trusted class of its events and the session's kind;
such chunks never enter the recall store (it takes ``memory`` hits only) and never auto-inject.
A forgotten session's rows are removed and never written again, by a forced rebuild included.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import apsw
from clawmem.engine.config import Clock, Settings
from clawmem.engine.index.chunking import chunk_id, chunk_memory_file
from clawmem.engine.index.sync import EmbedderIdentity
from clawmem.engine.sessions import flush, trust
from clawmem.engine.store import index_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.schema import vec_table_dims

SOURCE = "sessions"


def session_path(session_id: str) -> str:
    return f"sessions/{session_id}.jsonl"


def render(events: list[srows.EventRow]) -> tuple[str, list[str]]:
    """The transcript as text (one event per line) and each line's origin class."""
    lines: list[str] = []
    classes: list[str] = []
    for e in events:
        obj = json.loads(e.event_json)
        text = " ".join(str(obj.get("text", "")).split())
        lines.append(f"{obj.get('role', '')}: {text}")
        classes.append(e.origin_class)
    return "\n".join(lines), classes


def enabled(settings: Settings) -> bool:
    return SOURCE in settings.index.sources


def rebuild_hook(
    source: apsw.Connection, settings: Settings, clock: Clock, embedder: EmbedderIdentity | None
) -> Callable[[apsw.Connection], None]:
    """``shadow_rebuild``'s ``before_publish``: index the transcripts into the shadow database."""

    def hook(shadow: apsw.Connection) -> None:
        sync_sessions(source, shadow, settings, clock, embedder=embedder, force=True)

    return hook


def sync_sessions(
    source: apsw.Connection,
    target: apsw.Connection,
    settings: Settings,
    clock: Clock,
    *,
    embedder: EmbedderIdentity | None,
    force: bool = False,
) -> int:
    """Index the transcripts of ``source`` into ``target`` (the live DB or a shadow); returns sessions written."""
    tombstoned = srows.tombstoned_ids(source)
    windows = {session_path(w.session_id): w for w in srows.all_windows(source) if w.session_id not in tombstoned}
    known = index_rows.sources(target, SOURCE)
    vec = embedder is not None and vec_table_dims(target) is not None
    now = clock.timestamp()
    written = 0
    with target:
        for path in sorted(set(known) - set(windows)):
            index_rows.delete_source(target, path, SOURCE)  # forgotten or gone
    for path, w in sorted(windows.items()):
        prior = known.get(path)
        stamp = w.imported_at / 1000
        if not force and prior is not None and abs(prior.mtime - stamp) < 1e-6:
            continue  # transcripts never change after import
        text, classes = render(srows.events(source, w.session_id))
        chunks = chunk_memory_file(
            text, path, tokens=settings.index.chunk_tokens, overlap=settings.index.chunk_overlap, curated_root=False
        )
        new = []
        seen: set[str] = set()
        for c in chunks:
            cid = chunk_id(SOURCE, path, c.start_line, c.end_line, c.hash)
            if cid in seen:
                continue
            seen.add(cid)
            span = classes[c.start_line - 1 : c.end_line]
            origin = trust.least_trusted(*span) if span else "untrusted"
            new.append(
                index_rows.NewChunk(
                    id=cid,
                    path=path,
                    source=SOURCE,
                    start_line=c.start_line,
                    end_line=c.end_line,
                    hash=c.hash,
                    text=c.text,
                    origin_class=origin,
                    session_kind=w.kind,
                    observed_at=w.ended_at,
                    supersedes_key=None,
                    importance=None,
                    triggers=None,
                    project_key=None,
                )
            )
        data = text.encode("utf-8")
        with target:
            cached = (
                index_rows.cache_lookup(
                    target, embedder.provider, embedder.model, embedder.provider_key, [c.hash for c in new], now
                )
                if embedder is not None
                else {}
            )
            index_rows.delete_chunks_for_path(target, path, SOURCE)
            index_rows.insert_chunks(
                target, new, now=now, embeddings=cached, model=embedder.model if embedder else "fts-only", vec=vec
            )
            index_rows.upsert_source(target, path, SOURCE, flush.sha256(data), stamp, len(data))
        written += 1
    return written
