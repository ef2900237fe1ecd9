"""The agent's own memory index against the workspace files, in plain words.

OpenClaw indexes root ``MEMORY.md``, ``memory.md`` and ``USER.md``, every ``memory/**/*.md`` and
``memory.search.extraPaths`` (symlinks skipped), and re-chunks a file only when its SHA-256
changes (docs/memory-core.md §3). So comparing ``memory_index_sources`` (source ``memory``) with the files
answers "why does my agent not find X?": a file **changed** since its last index (hash differs),
one it **never indexed**, one it still holds that is **gone**. The index identity
(``memory_index_meta``) says how it searches: keyword-only without an embedding provider, and
blind to Chinese without the trigram tokenizer. Each finding carries the exact OpenClaw command
that fixes it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.openclaw.config import OpenClawConfig, expand
from clawmem.engine.store.openclaw.rows import SourceRow
from clawmem.engine.times import iso_ms

IDENTITY_KEY = "memory_index_meta_v1"
ROOT_FILES = ("MEMORY.md", "memory.md", "USER.md")

UP_TO_DATE = "up-to-date"
CHANGED = "changed"
NEVER_INDEXED = "never-indexed"
GONE = "gone"


@dataclass(frozen=True)
class IndexIdentity:
    provider: str | None
    model: str | None
    sources: tuple[str, ...]
    chunk_tokens: int | None
    chunk_overlap: int | None
    chunking_version: int | None
    vector_dims: int | None
    fts_tokenizer: str | None
    provenance_version: int | None


@dataclass(frozen=True)
class IndexedFile:
    path: str  # relative to the workspace (as OpenClaw stores it)
    state: str  # up-to-date | changed | never-indexed | gone
    indexed_hash: str | None
    disk_hash: str | None
    indexed_size: int | None
    disk_size: int | None
    indexed_mtime: str | None  # the file's mtime when it was indexed (ISO 8601)
    chunks: int


@dataclass(frozen=True)
class Finding:
    code: str  # keyword-only | no-trigram | provider-mismatch | tokenizer-mismatch | changed | never-indexed | gone
    #            | not-indexed | up-to-date
    message: str  # plain words
    fix: str | None  # the exact OpenClaw command (or setting and command) that fixes it


@dataclass(frozen=True)
class IndexReport:
    agent_id: str
    workspace: str
    identity: IndexIdentity | None  # None: OpenClaw never indexed this agent
    identity_problem: str | None  # the stored identity could not be parsed
    revision: int | None
    search_mode: str  # keyword-only | hybrid | none
    files_indexed: int
    chunks: int
    session_sources: int  # sources with source "sessions" (not compared with files)
    files: tuple[IndexedFile, ...]
    changed: tuple[str, ...]
    never_indexed: tuple[str, ...]
    gone: tuple[str, ...]
    findings: tuple[Finding, ...]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def memory_files(workspace: Path, config: OpenClawConfig | None, state: Path) -> dict[str, Path]:
    """The files OpenClaw would index, by workspace-relative path (symlinks skipped)."""
    found: dict[str, Path] = {}

    def add(path: Path) -> None:
        if path.is_symlink() or not path.is_file() or path.suffix.lower() != ".md":
            return
        try:
            rel = path.relative_to(workspace).as_posix()
        except ValueError:
            rel = str(path)
        found.setdefault(rel, path)

    def add_tree(folder: Path) -> None:
        if folder.is_symlink() or not folder.is_dir():
            return
        for path in sorted(folder.rglob("*.md")):
            if not any(p.is_symlink() for p in path.relative_to(folder).parents if p != Path(".")):
                add(path)

    if workspace.is_dir():
        for name in ROOT_FILES:
            add(workspace / name)
        add_tree(workspace / "memory")
    for extra in config.extra_paths if config else ():
        path = expand(extra, state) if extra.startswith("~") else workspace / extra
        add_tree(path) if path.is_dir() else add(path)
    return dict(sorted(found.items()))


def _sha256(path: Path) -> tuple[str | None, int | None]:
    try:
        data = path.read_bytes()
    except OSError:
        return None, None
    return hashlib.sha256(data).hexdigest(), len(data)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_identity(raw: str | None) -> tuple[IndexIdentity | None, str | None]:
    if raw is None:
        return None, None
    try:
        data = json.loads(raw)
    except ValueError:
        return None, f"memory_index_meta.{IDENTITY_KEY} is not JSON"
    if not isinstance(data, dict):
        return None, f"memory_index_meta.{IDENTITY_KEY} is not a JSON object"

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    sources = data.get("sources")
    return (
        IndexIdentity(
            provider=text("provider"),
            model=text("model"),
            sources=tuple(str(s) for s in sources) if isinstance(sources, list) else (),
            chunk_tokens=_int(data.get("chunkTokens")),
            chunk_overlap=_int(data.get("chunkOverlap")),
            chunking_version=_int(data.get("chunkingVersion")),
            vector_dims=_int(data.get("vectorDims")),
            fts_tokenizer=text("ftsTokenizer"),
            provenance_version=_int(data.get("provenanceVersion")),
        ),
        None,
    )


def keyword_only(identity: IndexIdentity) -> bool:
    """Built without an embedding provider (``provider: none``, model ``fts-only``, no vectors)."""
    return identity.provider in (None, "none") or identity.model == "fts-only" or not identity.vector_dims


def _findings(
    agent_id: str,
    identity: IndexIdentity | None,
    config: OpenClawConfig | None,
    changed: list[str],
    never: list[str],
    gone: list[str],
    indexed: int,
) -> list[Finding]:
    index = f"openclaw memory index --agent {agent_id}"
    force = f"{index} --force"
    if identity is None:
        return [
            Finding("not-indexed", "OpenClaw has not indexed this agent's memory yet: its searches find nothing", force)
        ]
    out: list[Finding] = []
    if keyword_only(identity):
        out.append(
            Finding(
                "keyword-only",
                "keyword-only (no embedding provider): searches match words, not meanings",
                f"set memory.search.provider in openclaw.json, then `{force}`",
            )
        )
    if identity.fts_tokenizer != "trigram":
        out.append(
            Finding(
                "no-trigram",
                f"no trigram tokenizer ({identity.fts_tokenizer or 'unicode61'}): Chinese queries will find nothing",
                f'set memory.search.store.fts.tokenizer to "trigram" in openclaw.json, then `{force}`',
            )
        )
    wanted = (config.memory_provider or "").strip() if config else ""
    if wanted and wanted not in ("auto", identity.provider or "none"):
        out.append(
            Finding(
                "provider-mismatch",
                f"openclaw.json asks for provider {wanted} but the index was built with "
                f"{identity.provider or 'none'}: search is paused until a full rebuild",
                f"`{force}`",
            )
        )
    tokenizer = (config.fts_tokenizer or "").strip() if config else ""
    if tokenizer and tokenizer != (identity.fts_tokenizer or "unicode61"):
        out.append(
            Finding(
                "tokenizer-mismatch",
                f"openclaw.json asks for the {tokenizer} tokenizer but the index was built with "
                f"{identity.fts_tokenizer or 'unicode61'}: search is paused until a full rebuild",
                f"`{force}`",
            )
        )
    if changed:
        out.append(
            Finding(
                "changed",
                f"{_plural(len(changed), 'file')} changed since its last index: its searches miss the new text",
                f"`{index}`",
            )
        )
    if never:
        out.append(
            Finding(
                "never-indexed",
                f"{_plural(len(never), 'file')} never indexed: its searches cannot find them",
                f"`{index}`",
            )
        )
    if gone:
        out.append(
            Finding(
                "gone",
                f"{_plural(len(gone), 'file')} it still holds {'is' if len(gone) == 1 else 'are'} gone: "
                "its searches can return text that no longer exists",
                f"`{index}`",
            )
        )
    if not (changed or never or gone):
        out.append(Finding("up-to-date", f"the index matches the workspace ({_plural(indexed, 'file')})", None))
    return out


def build_report(
    agent_id: str,
    workspace: Path,
    state: Path,
    config: OpenClawConfig | None,
    meta: dict[str, str],
    revision: int | None,
    sources: list[SourceRow],
    chunks: dict[tuple[str, str], int],
) -> IndexReport:
    identity, identity_problem = parse_identity(meta.get(IDENTITY_KEY))
    on_disk = memory_files(workspace, config, state)
    held = {s.path: s for s in sources if s.source == "memory"}
    files: list[IndexedFile] = []
    for rel in sorted(set(on_disk) | set(held)):
        src = held.get(rel)
        disk_hash, disk_size = _sha256(on_disk[rel]) if rel in on_disk else (None, None)
        if src is None:
            state_ = NEVER_INDEXED
        elif disk_hash is None:
            state_ = GONE
        else:
            state_ = UP_TO_DATE if src.hash and src.hash == disk_hash else CHANGED
        files.append(
            IndexedFile(
                path=rel,
                state=state_,
                indexed_hash=src.hash if src else None,
                disk_hash=disk_hash,
                indexed_size=src.size if src else None,
                disk_size=disk_size,
                indexed_mtime=iso_ms(int(src.mtime)) if src else None,
                chunks=chunks.get((rel, "memory"), 0),
            )
        )
    changed = [f.path for f in files if f.state == CHANGED]
    never = [f.path for f in files if f.state == NEVER_INDEXED]
    gone = [f.path for f in files if f.state == GONE]
    if identity is None:
        mode = "none"
    elif keyword_only(identity):
        mode = "keyword-only"
    else:
        mode = "hybrid"
    return IndexReport(
        agent_id=agent_id,
        workspace=str(workspace),
        identity=identity,
        identity_problem=identity_problem,
        revision=revision,
        search_mode=mode,
        files_indexed=len(held),
        chunks=sum(n for (_, source), n in chunks.items() if source == "memory"),
        session_sources=sum(1 for s in sources if s.source == "sessions"),
        files=tuple(files),
        changed=tuple(changed),
        never_indexed=tuple(never),
        gone=tuple(gone),
        findings=tuple(_findings(agent_id, identity, config, changed, never, gone, len(held))),
    )
