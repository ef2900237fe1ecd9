"""Line evidence: a vector for each content line of a multi-line chunk.

A chunk is up to 400 tokens: in a diary or a transcript that is 10–20 lines, and its one mean
vector blurs them; a question about one line ranks that chunk by the average of everything
else in it. Calibrated search therefore also compares the query with each line's own vector,
counts the best line in the chunk's vector score and shows it (engine/search/pipeline.py).
Measured on LoCoMo (bench/RESULTS.md). Vectors of a chunk's lines pooled from the chunk's own
token states in the same model pass ("late chunking") ranked no better than the chunk vector
there, so each line is embedded on its own.

The pass runs after the chunk vectors (search is hybrid before it starts), in the same order
(curated files, then diaries newest first), and resumes where it stopped. A search that returns
a chunk the pass has not reached asks for its lines (engine/index/line_requests.py): the next
batch holds only those, and a batch is about a second of the model (BATCH_CHARS), so what a
person is looking at gets its best lines within about two seconds. The lines of a batch
of chunks go to the model together, in calls of about one window (engine/index/model_calls.py).
A line is embedded once however often it occurs: twice in the batch, earlier in the pass, or in
the previous version of an edited chunk (its row stays until the pass's sweep and keeps a key
per line, engine/store/line_vector_rows.py), so appending or editing one line of a diary embeds
that line. Finding what is pending scans every chunk (0.1 s at 10k, 1.7 s at 100k), so a
complete pass leaves a marker (provider key and index revision) and the next sync skips the scan
unless chunks came, went or got vectors since.
"""

from __future__ import annotations

import functools
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import apsw
from clawmem.engine.embed.provider import Vector
from clawmem.engine.index.line_requests import LineRequests
from clawmem.engine.index.model_calls import ModelCalls
from clawmem.engine.index.sync import EmbedderIdentity
from clawmem.engine.index.time_left import TimeLeft
from clawmem.engine.store import index_rows
from clawmem.engine.store import line_vector_rows as lines_rows
from clawmem.engine.store.db import immediate

MIN_LINES = 2  # a chunk of one content line: its chunk vector is that line's
MAX_LINES = 64  # a chunk of many short lines: the first 64 (a 400-token chunk rarely has more)
_HEADING = re.compile(r"^\s*#{1,6}(?:\s|$)")
_COMMENT_ONLY = re.compile(r"^\s*<!--.*-->\s*$")
_WORD = re.compile(r"\w")
DONE_KEY = "line_vectors_done"  # index meta: "<provider key>:<index revision>" of the last complete pass
# Characters of lines one batch (one commit) holds: about 1 s of the model on two threads (4 calls
# of CALL_CHARS), so a search's ask waits at most that long for the batch before its own
# (bench/lines_asked.py). 16 LoCoMo chunk texts are ~24,000 characters of lines: ~3 s.
BATCH_CHARS = 8_000
SEEN_LINES = 20_000  # lines a pass remembers to embed a repeated line once (~30 MB of vectors)


@functools.lru_cache(maxsize=4096)  # asked of every candidate with line vectors, search after search
def evidence_lines(text: str) -> tuple[tuple[int, str], ...]:
    """(offset from the chunk's first line, text) of each line that says something: not blank,
    not a heading, not only an HTML comment marker, holding a letter or digit. Fewer than
    MIN_LINES: none (the chunk vector already is that line's)."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.split("\n")):
        s = line.strip()
        if s and not _HEADING.match(s) and not _COMMENT_ONLY.match(s) and _WORD.search(s):
            out.append((i, s))
            if len(out) == MAX_LINES:
                break
    return tuple(out) if len(out) >= MIN_LINES else ()


# The sample of lines the pass embeds early in its chunk pass, to know the line pace from then on
# (engine/index/time_left.py): about one batch, spread over the texts; only when the line pass is
# PACE_SAMPLE_MIN times that (a short pass gives a short estimate either way).
PACE_SAMPLE_CHARS = BATCH_CHARS
PACE_SAMPLE_MIN = 10


@dataclass(frozen=True)
class LinePace:
    """Lines embedded to measure the line pace: their characters, the seconds they took, and
    their vectors by line key (the line pass takes them as lines it has already embedded).
    ``counted``: characters the line pass counts per character it embeds — it counts every line
    of every text, and embeds a line repeated across transcript diaries, or kept from an edited
    text, once or not at all."""

    chars: int
    seconds: float
    vectors: dict[bytes, Vector]
    counted: float = 1.0


def measure_line_pace(
    conn: apsw.Connection, calls: ModelCalls, provider_key: str, texts: dict[str, str]
) -> LinePace | None:
    """Embed the lines of evenly spaced ``texts`` (hash -> text; about PACE_SAMPLE_CHARS of their
    lines) and time it: the estimate of the whole pass needs the line pace before the line pass
    starts, and a guess from the chunk pace was 26–51 % too long on a real workspace
    (bench/RESULTS.md §3). Only lines the line pass would embed: not of a text that has
    its line vectors, not one an edited text's old row gives. None when the lines to come are too
    few to be worth it. The line pass does not embed them again (``known``)."""
    if line_chars(list(texts.values())) < PACE_SAMPLE_CHARS * PACE_SAMPLE_MIN:
        return None
    have = lines_rows.hashes_with_lines(conn, list(texts), provider_key)
    todo = [t for h, t in texts.items() if h not in have]
    reusable = lines_rows.replaced_keys(conn, provider_key)
    total = embeds = 0  # characters the line pass counts as done, and those it will embed
    distinct: set[str] = set()
    for text in todo:
        for _, line in evidence_lines(text):
            total += len(line)
            if line not in distinct and lines_rows.line_key(line) not in reusable:
                distinct.add(line)
                embeds += len(line)
    if total < PACE_SAMPLE_CHARS * PACE_SAMPLE_MIN:
        return None
    counted = total / embeds if embeds else 1.0
    step = max(1, total // PACE_SAMPLE_CHARS)  # texts `step` apart, from the whole workspace, fill it
    lines: dict[str, None] = {}
    chars = 0
    for text in todo[step // 2 :: step]:
        for _, line in evidence_lines(text):
            if line not in lines and lines_rows.line_key(line) not in reusable:
                lines[line] = None
                chars += len(line)
        if chars >= PACE_SAMPLE_CHARS:
            break
    if not lines:
        return None
    started = time.perf_counter()
    vectors = calls.embed(list(lines))
    seconds = time.perf_counter() - started
    by_key = {lines_rows.line_key(line): v for line, v in vectors.items()}
    if len(vectors) < len(lines):  # cancelled part way: no pace, and the pass stops anyway
        return LinePace(0, 0.0, by_key)
    return LinePace(chars, seconds, by_key, counted)


@dataclass(frozen=True)
class LineStats:
    pending: int  # chunk texts whose lines were not looked at when the pass started
    embedded_lines: int  # lines run through the model
    cancelled: bool
    reused_lines: int = 0  # lines that took the vector of the same line in a replaced text


def embed_pending_lines(
    conn: apsw.Connection,
    calls: ModelCalls,
    ident: EmbedderIdentity,
    *,
    batch_size: int = 16,
    limit: int | None = None,
    progress: Callable[[int, int, float | None], None] | None = None,
    new_vectors: bool = True,
    time_left: TimeLeft | None = None,
    requests: LineRequests | None = None,
    answered: Callable[[list[str]], None] | None = None,
    known: dict[bytes, Vector] | None = None,
) -> LineStats:
    """Line vectors for every embedded chunk text that has none yet; one commit per batch of
    ``batch_size`` chunk texts. ``new_vectors`` False (the chunk pass attached none): nothing to
    do when the index has not changed since the last complete pass for this provider key.
    ``requests``: texts a search asked for (engine/index/line_requests.py) go into the next batch;
    ``answered`` gets their hashes once that batch is committed (before ``progress`` hears of it):
    a shared index publishes them then, not at the pass's end. ``known``: line key -> vector of
    lines this pass already embedded (the pace sample, :func:`measure_line_pace`)."""
    if not new_vectors and index_rows.get_meta(conn, DONE_KEY) == _marker(conn, ident):
        return LineStats(0, 0, False)
    todo = lines_rows.pending(conn, ident.model, ident.provider_key, limit)
    # line key -> vector, the most recent SEEN_LINES; seeded with the lines of replaced texts
    seen: OrderedDict[bytes, Vector] = OrderedDict()
    sampled = known or {}  # embedded by this pass already: not counted as reused
    replaced: dict[bytes, Vector] = (
        lines_rows.replaced_lines(conn, ident.provider_key, ident.dims, SEEN_LINES) if todo else {}
    )
    done = embedded = reused = 0
    cancelled = False
    if time_left is None:
        time_left = TimeLeft(0, 0)
    time_left.left["lines"] = line_chars([item.text for item in todo])  # now known exactly
    time_left.start("lines")
    if progress:
        progress(0, len(todo), time_left.seconds())
    start = 0
    while start < len(todo):
        if calls.cancelled:
            cancelled = True
            break
        size = max(1, batch_size)
        cap: int | None = BATCH_CHARS
        wanted_now = requests.take(conn) if requests is not None else []
        asked = 0
        if wanted_now:
            todo[start:], asked = asked_first(todo[start:], wanted_now)
            if asked:  # a batch of only those, however long: they are what a person waits for
                size, cap = min(size, asked), None
        items = _batch(todo[start : start + size], cap)
        start += len(items)
        wanted = {item.hash: [t for _, t in evidence_lines(item.text)] for item in items}
        keys = {line: lines_rows.line_key(line) for lines in wanted.values() for line in lines}
        new: list[str] = []
        for line, key in keys.items():
            if key in seen:
                continue
            if key in sampled:
                seen[key] = sampled[key]
                continue
            vector = replaced.get(key)
            if vector is None:
                new.append(line)
            else:
                seen[key] = vector
                reused += 1
        before = calls.texts
        for line, vector in calls.embed(new).items():
            seen[keys[line]] = vector
        embedded += calls.texts - before
        out: list[tuple[str, bytes, bytes]] = []
        for h, lines in wanted.items():
            if all(keys[line] in seen for line in lines):  # not: cancelled before its lines were done
                vectors = [seen[keys[line]] for line in lines]
                out.append((h, lines_rows.pack(vectors) if lines else b"", b"".join(keys[line] for line in lines)))
                for line in lines:
                    seen.move_to_end(keys[line])
        while len(seen) > SEEN_LINES:
            seen.popitem(last=False)
        with immediate(conn):
            for h, blob, line_keys in out:
                lines_rows.store(conn, h, ident.provider_key, blob, line_keys)
        done += len(out)
        if asked and answered is not None and out:
            answered([h for h, _, _ in out])
        time_left.done("lines", sum(_chars(item.text) for item in items[: len(out)]))
        if progress:
            progress(done, len(todo), time_left.seconds())
        if len(out) < len(items):  # cancelled inside the batch: the rest waits for the next pass
            cancelled = True
            break
    with immediate(conn):
        lines_rows.sweep(conn, ident.provider_key)
        if not cancelled and limit is None:
            index_rows.set_meta(conn, DONE_KEY, _marker(conn, ident))
    return LineStats(len(todo), embedded, cancelled, reused)


def _batch(items: list[lines_rows.PendingText], cap: int | None) -> list[lines_rows.PendingText]:
    """The first of ``items`` whose lines come to ``cap`` characters (at least one)."""
    if cap is None:
        return items
    total = 0
    for n, item in enumerate(items):
        total += _chars(item.text)
        if total > cap and n:
            return items[:n]
    return items


def asked_first(rest: list[lines_rows.PendingText], asked: list[str]) -> tuple[list[lines_rows.PendingText], int]:
    """``rest`` with the texts asked for in front, in the order given (the others keep theirs),
    and how many are in front. A hash the pass does not hold (its chunk had no vector when the
    pass started, or its lines are done) is dropped: the next pass finds it if it is pending."""
    order = {h: i for i, h in enumerate(asked)}
    front = sorted((item for item in rest if item.hash in order), key=lambda item: order[item.hash])
    if not front:
        return rest, 0
    return front + [item for item in rest if item.hash not in order], len(front)


def _chars(text: str) -> int:
    return sum(len(line) for _, line in evidence_lines(text))


def line_chars(texts: list[str]) -> int:
    """Characters of line evidence in these chunk texts (what the line pass will embed for
    them; engine/index/time_left.py counts the pass in characters)."""
    return sum(_chars(t) for t in texts)


def _marker(conn: apsw.Connection, ident: EmbedderIdentity) -> str:
    return f"{ident.provider_key}:{index_rows.revision(conn)}"
