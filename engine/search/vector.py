"""The vector leg (docs/memory-core.md §4 step 4): sqlite-vec KNN, or a batched cosine scan without it.

k = min(candidates × 8, 4096); score = 1 − cosine distance. Only chunks embedded by the
current model are considered, so vectors of another model are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from clawmem.engine.store import search_queries as q
from clawmem.engine.store.index_rows import blob_to_vec, vec_to_blob
from clawmem.engine.store.search_reader import SearchReader

KNN_OVERSAMPLE = 8
MAX_KNN_K = 4096
SCAN_BATCH = 256


@dataclass(frozen=True)
class VectorHit:
    id: str
    path: str
    source: str
    start_line: int
    end_line: int
    text: str
    cosine: float


def _unit(query_vec: np.ndarray) -> np.ndarray:
    """The query vector as float32 of length 1 (every scan and the matrix compare unit vectors)."""
    qv = np.asarray(query_vec, dtype=np.float32)
    return qv / (np.linalg.norm(qv) or 1.0)


def vector_leg(
    reader: SearchReader,
    query_vec: np.ndarray,
    *,
    model: str,
    sources: Sequence[str],
    limit: int,
    use_vec: bool,
    filter_free: FilterFree | None = None,
) -> list[VectorHit]:
    if not np.any(query_vec):
        return []
    if use_vec:
        # Oversampling only matters when the model/source filter can drop KNN rows; when every
        # stored vector passes it, the first ``limit`` neighbours are the answer (3x faster at 100k).
        k = limit if _all_vectors_pass(reader, model, sources, filter_free) else min(limit * KNN_OVERSAMPLE, MAX_KNN_K)
        rows = reader.knn(vec_to_blob(query_vec), k, model, sources, limit)
        return [
            VectorHit(r.id, r.path, r.source, int(r.start_line), int(r.end_line), r.text, 1.0 - float(r.distance))
            for r in rows
        ]
    return _scan(reader, query_vec, model, sources, limit)


# (index key, model, sources) -> ((revision, vector count), every vector passes the filter).
# One per SearchService (search/caches.py); None (a leg called on its own) checks each time.
FilterFree = dict[tuple[str, str, tuple[str, ...]], tuple[tuple[int, int], bool]]


def _all_vectors_pass(reader: SearchReader, model: str, sources: Sequence[str], cache: FilterFree | None) -> bool:
    """Whether every stored vector belongs to ``model`` and ``sources`` (checked once per index change)."""
    key = (reader.key, model, tuple(sources))
    stamp = (reader.index_state().revision, reader.vector_count())
    # In-memory databases: no cache.
    cached = cache.get(key) if cache is not None and reader.key else None
    if cached is not None and cached[0] == stamp:
        return cached[1]
    passes = not reader.has_filtered_vectors(model, sources)
    if cache is not None and reader.key:
        cache[key] = (stamp, passes)
    return passes


def _scan(
    reader: SearchReader, query_vec: np.ndarray, model: str, sources: Sequence[str], limit: int
) -> list[VectorHit]:
    """Cosine over every stored vector, 256 rows per batch, keeping the best ``limit``."""
    qv = _unit(query_vec)
    best_ids: list[str] = []
    best_scores = np.empty(0, dtype=np.float32)
    after = 0
    while True:
        page = reader.embedding_pages(model, sources, after, SCAN_BATCH)
        if not page:
            break
        after = page[-1][0]
        mat = np.stack([blob_to_vec(b) for _, _, b in page])
        norms = np.linalg.norm(mat, axis=1)
        norms[norms == 0] = 1.0
        scores = (mat @ qv) / norms
        ids = best_ids + [i for _, i, _ in page]
        all_scores = np.concatenate([best_scores, scores.astype(np.float32)])
        keep = np.argsort(-all_scores, kind="stable")[:limit]
        best_ids = [ids[i] for i in keep]
        best_scores = all_scores[keep]
    if not best_ids:
        return []
    meta = reader.chunk_meta(best_ids)
    out = []
    for cid, score in zip(best_ids, best_scores, strict=True):
        m = meta.get(cid)
        if m is not None and np.isfinite(score):
            out.append(VectorHit(cid, m.path, m.source, m.start_line, m.end_line, m.text, float(score)))
    return out


def cosines_for(reader: SearchReader, query_vec: np.ndarray, ids: Sequence[str], model: str) -> dict[str, float]:
    """Exact cosine for specific chunks (keyword hits the KNN window did not reach)."""
    blobs = reader.embeddings_for(ids, model)
    if not blobs:
        return {}
    qv = np.asarray(query_vec, dtype=np.float32)
    out = {}
    for cid, blob in blobs.items():
        v = blob_to_vec(blob)
        n = float(np.linalg.norm(v)) or 1.0
        out[cid] = float(v @ qv) / n
    return out


# --------------------------------------------------------------------------- in-memory matrix

MATRIX_PAGE = 4096


@dataclass(frozen=True)
class VectorMatrix:
    """Every stored vector of one model as one float32 matrix (unit rows), for long-lived
    processes: one matrix-vector product (~10–20 ms at 100k chunks) instead of sqlite-vec's
    brute-force scan (~150 ms). 100k chunks × 384 dims cost ~150 MB, the id → row map ~10 MB."""

    model: str
    ids: tuple[str, ...]
    sources: np.ndarray  # (n,) int8 code of each row's source
    source_names: tuple[str, ...]  # code -> source name
    matrix: np.ndarray  # (n, dims)
    row_of: dict[str, int]  # chunk id -> its row


def build_matrix(reader: SearchReader, model: str) -> VectorMatrix | None:
    ids: list[str] = []
    sources: list[str] = []
    blobs: list[np.ndarray] = []
    after = 0
    while True:
        page = reader.all_vectors(model, after, MATRIX_PAGE)
        if not page:
            break
        after = page[-1][0]
        for _, cid, source, blob in page:
            ids.append(cid)
            sources.append(source)
            blobs.append(blob_to_vec(blob))
    if not ids:
        return None
    matrix = np.stack(blobs).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    names = tuple(sorted(set(sources)))
    codes = np.array([names.index(src) for src in sources], dtype=np.int8)
    return VectorMatrix(model, tuple(ids), codes, names, matrix / norms, {cid: i for i, cid in enumerate(ids)})


def matrix_leg(
    reader: SearchReader, vm: VectorMatrix, query_vec: np.ndarray, sources: Sequence[str], limit: int
) -> list[VectorHit]:
    """The vector leg over the in-memory matrix: same rows and scores as the KNN."""
    return matrix_hits(reader, vm, matrix_top(vm, query_vec, sources, limit))


def matrix_top(vm: VectorMatrix, query_vec: np.ndarray, sources: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` rows of the matrix (row index, cosine), best first. Pure numpy, no
    database: it can run on another thread while the keyword leg uses the connection."""
    qv = _unit(query_vec)
    scores = vm.matrix @ qv
    if sources and not set(vm.source_names) <= set(sources):  # usually every row is "memory": no mask
        wanted = [i for i, name in enumerate(vm.source_names) if name in sources]
        scores = np.where(np.isin(vm.sources, wanted), scores, -np.inf)
    k = min(limit, len(scores))
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k]
    part = part[np.argsort(-scores[part], kind="stable")]
    return [(int(i), float(scores[i])) for i in part if np.isfinite(scores[i])]


def matrix_cosines(vm: VectorMatrix, query_vec: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """:func:`cosines_for` over the in-memory matrix (the same vectors, no database read): the
    cosines of chunks the vector window did not reach, computed exactly as :func:`matrix_top`'s."""
    rows = [(cid, vm.row_of[cid]) for cid in ids if cid in vm.row_of]
    if not rows:
        return {}
    qv = _unit(query_vec)
    scores = vm.matrix[[i for _, i in rows]] @ qv
    return {cid: float(score) for (cid, _), score in zip(rows, scores, strict=True)}


def matrix_hits(
    reader: SearchReader,
    vm: VectorMatrix,
    top: Sequence[tuple[int, float]],
    meta: dict[str, q.ChunkMeta] | None = None,
) -> list[VectorHit]:
    """The chunks of :func:`matrix_top`'s rows, read from the index; their metadata is added to
    ``meta`` (the search needs it for every candidate: one read instead of two), and chunks
    already in ``meta`` (the keyword hits', read while the query embedded) are not read again."""
    rows = meta if meta is not None else {}
    rows.update(reader.chunk_meta([vm.ids[i] for i, _ in top if vm.ids[i] not in rows]))
    out = []
    for i, score in top:
        m = rows.get(vm.ids[i])
        if m is not None:
            out.append(VectorHit(m.id, m.path, m.source, m.start_line, m.end_line, m.text, score))
    return out
