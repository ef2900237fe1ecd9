"""``index``, ``status`` and ``reset``."""

from __future__ import annotations

import argparse
import sys

from clawmem.cli import openclaw_cmds, output
from clawmem.engine.index.service import PublishStats
from clawmem.engine.json_form import json_form
from clawmem.engine.status import StatusReport, build_status
from clawmem.engine.status_lines import status_lines
from clawmem.shell import flags, messages


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parent = flags.global_parent()
    p = sub.add_parser("index", parents=[parent], help="index the workspace (incremental; --force rebuilds)")
    p.add_argument("--force", action="store_true", help="full rebuild into a shadow index, then publish")
    p.add_argument("--no-embed", action="store_true", help="index text only; leave embedding for later")
    p.add_argument(
        "--threads",
        type=_index_threads,
        metavar="N|auto",
        help="threads for this run's embedding (default: embedding.index_threads, auto: every core "
        "other processes leave free, re-measured as it goes)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(handler=cmd_index)

    p = sub.add_parser("status", parents=[parent], help="show the index, model and workspace status")
    p.add_argument("--deep", action="store_true", help="probe the model and the vector store for real")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser("reset", parents=[parent], help="drop the derived index tables (not a privacy purge)")
    p.add_argument("--yes", action="store_true", help="do not ask (required when not on a terminal)")
    p.set_defaults(handler=cmd_reset)


def _index_threads(text: str) -> str | int:
    if text == "auto":
        return text
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected auto or a positive number, got {text!r}")
    return int(text)


def cmd_index(args: argparse.Namespace) -> int:
    overrides = {"embedding": {"index_threads": args.threads}} if args.threads is not None else {}
    engine = flags.engine_from(args, **overrides)
    engine.require_workspace()
    if not args.json and sys.stderr.isatty():
        # Told only when the model really loads: with its card cached, an index run that has
        # nothing to embed never loads it (engine.embed.model_card).
        engine.provider_choice(progress=lambda message: print(message, file=sys.stderr))
    with output.progress_bar(not args.json) as update:
        report = engine.sync(
            force=args.force,
            embed=not args.no_embed,
            progress=update,
            embed_progress=lambda done, total, left: update("embed", done, total, left),
            line_progress=lambda done, total, left: update("lines", done, total, left),
        )
    if args.json:
        output.print_json(
            {
                "files": report.files,
                "chunks": report.chunks,
                "embedded": report.embedded,
                "cacheHits": report.cache_hits,
                "skipped": [{"path": p, "reason": r} for p, r in report.skipped],
                "warnings": list(report.warnings),
                "durationMs": report.duration_ms,
                "rebuilt": report.rebuilt,
                "changedFiles": report.changed_files,
                "removedFiles": report.removed_files,
                "pendingEmbeddings": report.pending_embeddings,
                "embeddedLines": report.embedded_lines,
                "reusedLines": report.reused_lines,
                "shared": _shared_json(report.shared),
            }
        )
        return 0
    for warning in report.warnings:
        messages.warn(warning)
    what = "rebuilt" if report.rebuilt else "indexed"
    print(
        f"{what} {report.files} files · {report.chunks} chunks · {report.embedded} embedded · "
        + (f"{report.embedded_lines} lines embedded · " if report.embedded_lines else "")
        + (f"{report.reused_lines} unchanged lines reused · " if report.reused_lines else "")
        + f"{report.cache_hits} from cache · {report.duration_ms / 1000:.1f} s"
    )
    if report.shared is not None:
        p = report.shared
        what = "copied whole" if p.full else f"{p.replaced_files} files replaced, {p.removed_files} removed"
        print(f"shared index: {what} · {p.vectors} vectors · {p.seeded} vectors taken from it · revision {p.revision}")
    if report.pending_embeddings:
        print(f"{report.pending_embeddings} chunks still without a vector (run `clawmem index` again)")
    return 0


def _shared_json(p: PublishStats | None) -> dict[str, object] | None:
    """What this run published to the shared index (store.url), or None without one."""
    if p is None:
        return None
    return {
        "replacedFiles": p.replaced_files,
        "removedFiles": p.removed_files,
        "vectors": p.vectors,
        "lines": p.lines,
        "full": p.full,
        "seeded": p.seeded,
        "revision": p.revision,
    }


def status_json(report: StatusReport) -> dict[str, object]:
    """The report as JSON: ``skipped`` in ``index --json``'s shape, ``warnings`` beside ``issues``."""
    data: dict[str, object] = json_form(report)
    data["skipped"] = [{"path": p, "reason": r} for p, r in report.skipped]
    data["warnings"] = list(report.warnings)
    return data


def cmd_status(args: argparse.Namespace) -> int:
    openclaw = flags.openclaw_home(args)
    if openclaw is not None:
        return openclaw_cmds.cmd_status(args, openclaw)
    engine = flags.engine_from(args)
    engine.require_memory_to_read()
    report = build_status(engine.index, deep=args.deep)
    if args.json:
        output.print_json([{"agentId": report.agent_id, "status": status_json(report)}])
        return 0
    print_status(report)  # warnings are among its Issues
    return 0


def print_status(r: StatusReport) -> None:
    width = max(len(label) for label, _ in status_lines(r))
    for label, value in status_lines(r):
        print(f"{label + ':':<{width + 2}}{value}")


def cmd_reset(args: argparse.Namespace) -> int:
    engine = flags.engine_from(args)
    engine.require_workspace()
    if not args.yes:
        if not sys.stdin.isatty():
            messages.fail("reset needs --yes when not run on a terminal")
            return 1
        answer = input(f"Drop the derived index of agent {engine.settings.agent_id!r}? Files are not touched. [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing changed")
            return 0
    engine.reset()
    print("derived index dropped; run `clawmem index` to rebuild it")
    return 0
