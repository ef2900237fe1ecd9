"""The background embedding pass: vectors for chunks that do not have one yet.

Order: curated files first, then dated diaries newest first, then the rest, so the memory a
user is most likely to ask about becomes semantic first. Then the line vectors of every
multi-line chunk (engine/index/line_evidence.py), in the same order, with its own progress,
but the lines a search asked for first (engine/index/line_requests.py).
Identical chunk texts are embedded once (the cache is keyed by text hash). The texts a batch
still needs go to the model together, in calls of about one window, on the threads the machine's
load leaves free (engine/index/model_calls.py). Every batch commits on its own, so an
interrupted pass resumes where it stopped: the next pass simply finds fewer pending chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import apsw
from clawmem.engine.config import Clock
from clawmem.engine.index.line_evidence import LinePace, embed_pending_lines, line_chars, measure_line_pace
from clawmem.engine.index.line_requests import LineRequests
from clawmem.engine.index.model_calls import ModelCalls
from clawmem.engine.index.sync import EmbedderIdentity
from clawmem.engine.index.time_left import TimeLeft
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store.db import immediate

# (chunks done, chunks pending at start, seconds left for the whole pass or None);
# lines: (chunk texts done, pending, seconds left)
EmbedProgress = Callable[[int, int, float | None], None]


@dataclass(frozen=True)
class EmbedStats:
    pending: int  # chunks without a vector when the pass started
    embedded: int  # chunks that got a vector
    model_calls: int  # chunk texts actually run through the model
    cache_hits: int
    cancelled: bool
    duration_ms: int
    line_calls: int = 0  # distinct lines run through the model for line evidence
    lines_reused: int = 0  # lines that took the vector of the same line in a replaced text


def embed_pending(
    conn: apsw.Connection,
    calls: ModelCalls,
    ident: EmbedderIdentity,
    clock: Clock,
    *,
    vec: bool,
    batch_size: int = 16,
    cache_cap: int = 50_000,
    limit: int | None = None,
    progress: EmbedProgress | None = None,
    line_progress: EmbedProgress | None = None,
    lines: bool = True,
    line_requests: LineRequests | None = None,
    chunks_done: Callable[[], None] | None = None,
    lines_answered: Callable[[list[str]], None] | None = None,
) -> EmbedStats:
    """Chunk vectors for every chunk without one, then line vectors (engine/index/line_evidence.py).
    ``chunks_done`` is called between the two passes when chunks got vectors (a shared index
    publishes them then: hybrid search there need not wait for the lines); ``lines_answered``
    with the texts whose lines a search asked for, once they are stored."""
    started = time.perf_counter()
    cancel = calls.cancel
    pending = rows.pending_chunks(conn, limit)
    total = len(pending)
    by_hash: dict[str, list[rows.PendingChunk]] = {}
    for chunk in pending:
        by_hash.setdefault(chunk.hash, []).append(chunk)
    hashes = list(by_hash)
    done = embedded = hits = 0
    cancelled = False
    texts = [c[0].text for c in by_hash.values()]
    # The lines of the chunks about to be embedded; the line pass counts its own exactly when it
    # starts (texts embedded earlier without line vectors are found by a scan only then).
    left = TimeLeft(sum(map(len, texts)), line_chars(texts) if lines else 0)
    if progress:
        progress(0, total, None)
    sample: LinePace | None = None
    sampled = 0  # lines embedded for the sample, during the chunk pass
    sample_due = lines  # once the chunk pace is measured
    left.start("embed")
    for start in range(0, len(hashes), max(1, batch_size)):
        if cancel is not None and cancel.is_set():
            cancelled = True
            break
        batch, stored, cached = _embed_chunk_batch(
            conn, calls, ident, clock, by_hash, hashes[start : start + batch_size], vec
        )
        embedded += stored
        hits += cached
        done += sum(len(by_hash[h]) for h in batch)
        left.done("embed", sum(len(by_hash[h][0].text) for h in batch))
        if sample_due and left.pace("embed") is not None and not calls.cancelled:
            sample_due = False
            sample, sampled = _sample_line_pace(conn, calls, ident, by_hash, left)
        if progress:
            progress(done, total, left.seconds())
    with immediate(conn):
        rows.cache_evict(conn, cache_cap)
    chunk_calls = calls.texts - sampled
    line_calls, reused = sampled, 0
    if chunks_done is not None and embedded and not cancelled:
        chunks_done()
    if lines and not cancelled and not calls.cancelled:
        line_stats = embed_pending_lines(
            conn,
            calls,
            ident,
            batch_size=batch_size,
            limit=limit,
            progress=line_progress,
            new_vectors=embedded > 0,
            time_left=left,
            requests=line_requests,
            answered=lines_answered,
            known=sample.vectors if sample is not None else None,
        )
        line_calls, cancelled = sampled + line_stats.embedded_lines, line_stats.cancelled
        reused = line_stats.reused_lines
    return EmbedStats(
        pending=total,
        embedded=embedded,
        model_calls=chunk_calls,
        cache_hits=hits,
        cancelled=cancelled,
        duration_ms=int((time.perf_counter() - started) * 1000),
        line_calls=line_calls,
        lines_reused=reused,
    )


def _embed_chunk_batch(
    conn: apsw.Connection,
    calls: ModelCalls,
    ident: EmbedderIdentity,
    clock: Clock,
    by_hash: dict[str, list[rows.PendingChunk]],
    batch: list[str],
    vec: bool,
) -> tuple[list[str], int, int]:
    """One batch of chunk texts: vectors from the cache or the model, stored on their chunks in
    one transaction. (the text hashes that got a vector, chunks given one, cache hits)."""
    now = clock.timestamp()
    with immediate(conn):
        cached = rows.cache_lookup(conn, ident.provider, ident.model, ident.provider_key, batch, now)
    missing = [h for h in batch if h not in cached]
    vectors: dict[str, bytes] = dict(cached)
    computed = calls.embed([by_hash[h][0].text for h in missing])
    for h in missing:
        vector = computed.get(by_hash[h][0].text)
        if vector is not None:
            vectors[h] = rows.vec_to_blob(vector)
    batch = [h for h in batch if h in vectors]
    embedded = 0
    with immediate(conn):
        for h in batch:
            if h in missing:
                rows.cache_store(conn, ident.provider, ident.model, ident.provider_key, h, vectors[h], ident.dims, now)
            embedded += len(rows.set_chunk_embedding(conn, h, vectors[h], ident.model, vec))
    return batch, embedded, len(cached)


def _sample_line_pace(
    conn: apsw.Connection,
    calls: ModelCalls,
    ident: EmbedderIdentity,
    by_hash: dict[str, list[rows.PendingChunk]],
    left: TimeLeft,
) -> tuple[LinePace | None, int]:
    """The line pace, for an honest estimate of the whole pass before the line pass runs: a
    sample of lines embedded now and given to ``left`` (its time is not chunk time). Taken once
    the chunk pace is measured, not at the start: there the first decodes of a cold model ran at
    half the pace and the estimate came out worse than with none (bench/RESULTS.md §3).
    (the sample, lines it embedded)."""
    before = calls.texts
    sample = measure_line_pace(conn, calls, ident.provider_key, {h: c[0].text for h, c in by_hash.items()})
    if sample is not None:
        left.prior("lines", round(sample.chars * sample.counted), sample.seconds)
        left.exclude("embed", sample.seconds)
    return sample, calls.texts - before
