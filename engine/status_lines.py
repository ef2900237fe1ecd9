"""The status report as labelled lines in the spec's order (shared by the CLI and the TUI)."""

from __future__ import annotations

from pathlib import Path

from clawmem.engine.status import StatusReport


def home_relative(path: str) -> str:
    """``path`` with the user's home directory shown as ``~`` (as a shell prompt shows it)."""
    home = str(Path.home())
    return "~" + path[len(home) :] if path.startswith(home + "/") else path


def byte_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def line_vectors_text(r: StatusReport) -> str:
    """How many multi-line chunks have a vector per line (best-line evidence), and what waits."""
    if not r.line_vectors_enabled:
        return "off (embedding.line_vectors = false)"
    if not r.line_vector_chunks and not r.line_vectors_waiting:
        return "none"
    lines = f" ({r.line_vectors:,} lines)" if r.line_vectors is not None else ""
    waiting = f", {r.line_vectors_waiting:,} chunks waiting" if r.line_vectors_waiting else ""
    return f"{r.line_vector_chunks:,} multi-line chunks{lines}{waiting}"


def status_lines(r: StatusReport) -> list[tuple[str, str]]:
    """Labelled lines in the spec's order (shared by the CLI and the TUI's Status pane)."""
    coverage = f"{r.vector_coverage * 100:.0f} % embedded" if r.chunks else "nothing indexed"
    lines = [
        ("Provider", f"{r.provider} (requested: {r.provider_requested})"),
        ("Model", r.model),
        ("Sources", ", ".join(r.sources)),
        ("Extra paths", ", ".join(r.extra_paths) or "none"),
        ("Indexed", f"{r.files_indexed}/{r.files_total} files · {r.chunks} chunks"),
        (
            "Dirty",
            ("yes: " + ", ".join(r.dirty_files[:5]) + (" …" if len(r.dirty_files) > 5 else ""))
            if r.dirty_files
            else ("yes (embedding pending)" if r.dirty else "no"),
        ),
        ("Store", home_relative(r.db_path) + (f" (read-only: {r.db_read_only})" if r.db_read_only else "")),
        *(
            [
                ("Shared index", r.shared_index),
                ("Shared recalls", r.shared_recalls or ""),
                (
                    "On this machine",
                    "sessions, intents and Dreaming state (store.url shares the index and the recall signals)",
                ),
            ]
            if r.shared_index is not None
            else []
        ),
        ("Workspace", home_relative(r.workspace)),
        ("Dreaming", r.dreaming),
        ("Storage", f"DB {byte_size(r.db_bytes)} · WAL {byte_size(r.wal_bytes)}"),
    ]
    if r.deep is not None:
        lines.append(("Embeddings", r.deep.embeddings))
    ident = (
        "none (index empty)"
        if r.identity is None
        else (
            "mismatch"
            if r.identity_mismatch
            else f"{r.identity.get('provider')}/{r.identity.get('model')} · "
            f"chunking v{r.identity.get('chunkingVersion')} · {r.identity.get('ftsTokenizer')}"
        )
    )
    lines.append(("Index identity", ident))
    if r.fix_hint:
        lines.append(("Fix", r.fix_hint))
    lines += [
        ("By kind", ", ".join(f"{k} {v}" for k, v in r.by_kind.items()) or "none"),
        ("Search mode", f"{r.search_mode} ({coverage})"),
        ("Fallback", r.fallback or "none"),
        ("Vector store", r.vector_store if r.deep is None else r.deep.vector_store),
    ]
    if r.deep is not None:
        lines.append(("Semantic vectors", r.deep.semantic_vectors))
    lines += [
        ("FTS", f"{r.fts_tokenizer or 'missing'}"),
        ("Line vectors", line_vectors_text(r)),
        ("Embedding cache", f"{r.cache_entries:,} entries (cap {r.cache_cap:,})"),
        (
            "Recall store",
            f"{r.recall_entries} entries" + (f", updated {r.recall_updated_at}" if r.recall_updated_at else ""),
        ),
        ("Dreams", r.dreams_file or "none"),
        (
            "Proposals",
            f"{r.supersede_proposals} supersession(s) proposed by agents wait for you (clawmem supersede --proposals)"
            if r.supersede_proposals
            else "none waiting",
        ),
        ("Skipped", ", ".join(f"{p} ({why})" for p, why in r.skipped) or "none"),
        ("Issues", "; ".join(r.issues) or "none"),
    ]
    return lines
