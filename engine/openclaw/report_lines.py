"""An OpenClaw home's status as labelled lines (shared by the CLI's ``status --openclaw`` and
the TUI's Status pane), and the one-line labels of its sessions and events."""

from __future__ import annotations

from clawmem.engine.openclaw.databases import DatabaseInfo
from clawmem.engine.openclaw.home import OpenClawStatus
from clawmem.engine.openclaw.index_report import IndexReport
from clawmem.engine.openclaw.sessions import OpenClawSession
from clawmem.engine.sessions.service import TrustCounts
from clawmem.engine.status_lines import byte_size, home_relative
from clawmem.engine.store.openclaw import readonly

READ_MODES = {
    readonly.IMMUTABLE: "not open in OpenClaw now: read as an immutable file",
    readonly.READONLY_SHM: "open in OpenClaw: read through its WAL, the -shm opened read-only",
    readonly.WAL_COPY: "a WAL without its -shm: read from a private copy",
    readonly.LOCKING: "rollback journal: read under a shared lock",
}


def database_text(d: DatabaseInfo) -> str:
    if d.schema_version is None:
        return "not read" if d.exists else "missing"
    parts = [
        f"role {d.role}",
        f"schema {d.schema_version} (clawmem reads up to {d.newest_known})",
        f"OpenClaw {d.app_version or '?'}",
    ]
    if d.size_bytes is not None:
        parts.append(byte_size(d.size_bytes) + (f" + {byte_size(d.wal_bytes)} WAL" if d.wal_bytes is not None else ""))
    if d.read_mode:
        parts.append(READ_MODES.get(d.read_mode, d.read_mode))
    return " · ".join(parts)


def index_lines(r: IndexReport, *, deep: bool) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = r.identity
    mode = {"keyword-only": "keyword-only", "hybrid": "hybrid (vectors + keywords)", "none": "not indexed"}
    out.append(("Index", f"{mode.get(r.search_mode, r.search_mode)} · {r.files_indexed} files · {r.chunks} chunks"))
    if i is not None:
        dims = f" · {i.vector_dims} dims" if i.vector_dims else ""
        out.append(
            (
                "Identity",
                f"provider {i.provider or '?'} · model {i.model or '?'}{dims} · "
                f"chunks {i.chunk_tokens}/{i.chunk_overlap} tokens · chunking v{i.chunking_version} · "
                f"FTS {i.fts_tokenizer or 'unicode61'}"
                + (f" · revision {r.revision}" if r.revision is not None else ""),
            )
        )
    elif r.identity_problem:
        out.append(("Identity", r.identity_problem))
    for n, f in enumerate(r.findings):
        text = f.message + (f" — fix: {f.fix}" if f.fix else "")
        out.append(("Findings" if n == 0 else "", text))
    if deep:
        for n, file in enumerate(r.files):
            hashes = f"indexed {(file.indexed_hash or '-')[:12]} · now {(file.disk_hash or '-')[:12]}"
            out.append(("Files" if n == 0 else "", f"{file.state:<13} {file.path}  ({hashes} · {file.chunks} chunks)"))
    return out


def status_lines(s: OpenClawStatus, *, deep: bool = False) -> list[tuple[str, str]]:
    agent_db, state_db = s.databases
    out = [
        ("OpenClaw home", home_relative(s.state_dir)),
        ("Config", home_relative(s.config_path) + ("" if s.config_read else " (not read: defaults used)")),
        ("Agent", f"{s.agent_id}" + (f" (agents: {', '.join(s.agents)})" if s.agents else "")),
        (
            "Workspace",
            f"{home_relative(s.workspace)} (from {s.workspace_from})" + ("" if s.workspace_exists else " — missing"),
        ),
        ("Owners", ", ".join(s.owners) or "none named (commands.ownerAllowFrom)"),
        ("Agent database", f"{home_relative(agent_db.path)} (from {s.agent_db_from})"),
        ("", database_text(agent_db)),
        ("State database", home_relative(state_db.path)),
        ("", database_text(state_db)),
    ]
    if s.index is not None:
        out += index_lines(s.index, deep=deep)
    if s.sessions is not None:
        out.append(("Sessions", f"{s.sessions.sessions} ({s.sessions.events} transcript events), read in place"))
    return out


def trust_text(t: TrustCounts) -> str:
    parts = [
        f"{name} {n}"
        for name, n in (("owner", t.owner), ("agent", t.agent), ("system", t.system), ("untrusted", t.untrusted))
        if n
    ]
    return " · ".join(parts) or "no messages"


def sender_text(s: OpenClawSession) -> str:
    if s.sender == "-":
        return "-"
    return s.sender + (" (owner)" if s.sender_is_owner else " (not the owner)")
