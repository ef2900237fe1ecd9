"""The spec's ``sessions`` index source: transcripts as searchable chunks, never for tombstoned sessions.

Off by default (``index.sources = ["memory"]``); with ``"sessions"`` in the list, every sync brings
the ``sessions`` rows in line with the imported transcripts. Each session becomes the virtual
path ``sessions/<session_id>.jsonl`` rendered one event per line (``role: text``), so line N is
event N. A chunk's provenance is the least trusted class of its events and the session's kind;
such chunks never enter the recall store (it takes ``memory`` hits only) and never auto-inject.
A forgotten session's rows are removed and never written again, by a forced rebuild included.

With an OpenClaw home open (``clawmem --openclaw``), the agent's own sessions are indexed the same
way, read in place from its database (nothing is copied into it), as ``sessions/openclaw/<id>.jsonl``
with the classes clawmem derives for them (:mod:`engine.openclaw.sessions`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import apsw
from clawmem.engine.config import Clock, Settings
from clawmem.engine.errors import ClawmemError
from clawmem.engine.index.chunking import chunk_id, chunk_memory_file
from clawmem.engine.index.sync import EmbedderIdentity
from clawmem.engine.sessions import flush, trust
from clawmem.engine.store import index_rows
from clawmem.engine.store import sessions_rows as srows
from clawmem.engine.store.schema import vec_table_dims

if TYPE_CHECKING:  # the OpenClaw facade imports the sessions service: only its type is needed here
    from clawmem.engine.openclaw.home import OpenClawHome
    from clawmem.engine.openclaw.sessions import OpenClawEvent

SOURCE = "sessions"


OPENCLAW_PREFIX = "sessions/openclaw/"


def session_path(session_id: str) -> str:
    return f"sessions/{session_id}.jsonl"


def openclaw_session_path(session_id: str) -> str:
    """An OpenClaw session's virtual path: its own folder, so it never meets an imported id."""
    return f"{OPENCLAW_PREFIX}{session_id}.jsonl"


def session_id_of(path: str) -> str | None:
    """The session a ``sessions``-source path names (an imported one's id, or OpenClaw's)."""
    name = path.removeprefix(OPENCLAW_PREFIX) if path.startswith(OPENCLAW_PREFIX) else path.removeprefix("sessions/")
    return name.removesuffix(".jsonl") if name != path and name.endswith(".jsonl") else None


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
    source: apsw.Connection,
    settings: Settings,
    clock: Clock,
    embedder: EmbedderIdentity | None,
    openclaw: OpenClawHome | None = None,
    warn: Callable[[str], None] | None = None,
) -> Callable[[apsw.Connection], None]:
    """``shadow_rebuild``'s ``before_publish``: index the transcripts into the shadow database."""

    def hook(shadow: apsw.Connection) -> None:
        sync_sessions(source, shadow, settings, clock, embedder=embedder, force=True, openclaw=openclaw, warn=warn)

    return hook


@dataclass(frozen=True)
class _Transcript:
    """One session as the index sees it: its virtual path, change stamp and how to render it."""

    path: str
    stamp: float  # epoch seconds; an unchanged stamp is not read again
    kind: str
    observed_at: int  # epoch ms of its last event
    render: Callable[[], tuple[str, list[str | None]]]


def _clawmem_transcripts(source: apsw.Connection) -> dict[str, _Transcript]:
    tombstoned = srows.tombstoned_ids(source)
    out: dict[str, _Transcript] = {}
    for w in srows.all_windows(source):
        if w.session_id in tombstoned:
            continue

        def load(sid: str = w.session_id) -> tuple[str, list[str | None]]:
            text, classes = render(srows.events(source, sid))
            return text, list(classes)

        out[session_path(w.session_id)] = _Transcript(
            session_path(w.session_id), w.imported_at / 1000, w.kind, w.ended_at, load
        )
    return out


def render_openclaw(events: Sequence[OpenClawEvent]) -> tuple[str, list[str | None]]:
    """An OpenClaw transcript one event per line: line N is the event of seq N-1 (OpenClaw counts
    from 0), as ``session show`` lists them. Only messages carry text and a class: scaffolding
    (session start, model change), unreadable rows and gaps in seq are blank lines, so they
    neither match a query nor lower a chunk's class."""
    size = max((e.seq for e in events if e.seq >= 0), default=-1) + 1
    lines: list[str] = [""] * size
    classes: list[str | None] = [None] * size
    for e in events:
        if e.seq < 0 or e.type != "message" or e.problem:
            continue
        label = f"{e.role} ({e.tool})" if e.tool else e.role
        lines[e.seq] = f"{label}: {' '.join(e.text.split())}"
        classes[e.seq] = e.origin_class
    return "\n".join(lines), classes


def _openclaw_transcripts(
    openclaw: OpenClawHome, known: Mapping[str, index_rows.SourceRow], force: bool, forgotten: set[str]
) -> dict[str, _Transcript]:
    """The agent's sessions read in place (but those forgotten in clawmem); only those whose stamp
    moved are decoded (in one read)."""
    stamps = {sid: ms for sid, ms in openclaw.transcript_stamps().items() if sid not in forgotten}
    changed = [
        sid
        for sid, ms in stamps.items()
        if force or (prior := known.get(openclaw_session_path(sid))) is None or abs(prior.mtime - ms / 1000) >= 1e-6
    ]
    details = {d.summary.session_id: d for d in openclaw.transcripts(changed)} if changed else {}
    out: dict[str, _Transcript] = {}
    for sid, ms in stamps.items():
        path = openclaw_session_path(sid)
        detail = details.get(sid)
        if detail is not None:
            out[path] = _Transcript(path, ms / 1000, detail.summary.kind, ms, partial(render_openclaw, detail.events))
        elif sid not in changed:  # unchanged: kept as indexed (the stamp matches, render is never called)
            out[path] = _Transcript(path, ms / 1000, "", 0, partial(render_openclaw, ()))
        # changed but gone by the time it was read: left out, so its rows go
    return out


def sync_sessions(
    source: apsw.Connection,
    target: apsw.Connection,
    settings: Settings,
    clock: Clock,
    *,
    embedder: EmbedderIdentity | None,
    force: bool = False,
    openclaw: OpenClawHome | None = None,
    warn: Callable[[str], None] | None = None,
) -> int:
    """Index the transcripts of ``source`` into ``target`` (the live DB or a shadow), and those of
    ``openclaw``'s agent read in place (``sessions/openclaw/<id>.jsonl``); returns sessions written.

    Without an OpenClaw home open (or when its sessions cannot be read: ``warn`` says why), the
    OpenClaw transcripts indexed earlier are kept as they are: a plain ``clawmem search`` in the
    same home must not drop what ``clawmem --openclaw`` indexed. A rebuild (an empty ``target``)
    holds what it can read now; the next sync with the home open brings them back.
    """
    known = index_rows.sources(target, SOURCE)
    transcripts = _clawmem_transcripts(source)
    theirs_open = False
    if openclaw is not None:
        try:
            forgotten = srows.tombstoned_ids(source)  # forgotten in clawmem: never indexed again
            transcripts.update(_openclaw_transcripts(openclaw, known, force, forgotten))
            theirs_open = True
        except ClawmemError as exc:
            if warn is not None:
                warn(f"OpenClaw's sessions are not indexed: {exc}")
    vec = embedder is not None and vec_table_dims(target) is not None
    now = clock.timestamp()
    written = 0
    with target:
        for path in sorted(set(known) - set(transcripts)):
            if path.startswith(OPENCLAW_PREFIX) and not theirs_open:
                continue
            index_rows.delete_source(target, path, SOURCE)  # forgotten or gone
    for path, t in sorted(transcripts.items()):
        prior = known.get(path)
        if not force and prior is not None and abs(prior.mtime - t.stamp) < 1e-6:
            continue  # an imported transcript never changes; OpenClaw's move their stamp when they do
        text, classes = t.render()
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
            span = [k for k in classes[c.start_line - 1 : c.end_line] if k is not None]
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
                    session_kind=t.kind,
                    observed_at=t.observed_at,
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
            index_rows.upsert_source(target, path, SOURCE, flush.sha256(data), t.stamp, len(data))
        written += 1
    return written
