"""DREAMS.md, the human review surface (docs/memory-core.md §1, §5): diary entries, phase blocks, history.

Formats follow OpenClaw's writers:

- the file starts with ``# Dream Diary``; diary entries sit between
  ``<!-- openclaw:dreaming:diary:start -->`` and ``…:end -->``, each ``---``, a blank line, an
  italic date line (``*November 5, 2026 at 9:00 AM UTC*``), a blank line and the entry;
- ``## Light Sleep`` / ``## REM Sleep`` / ``## Deep Sleep`` managed blocks between
  ``<!-- openclaw:dreaming:<phase>:start -->`` and ``…:end -->``, replaced on every run (in
  clawmem they live in DREAMS.md, never in the user's daily notes);
- ``## Memory Consolidation History`` with one ``### <ISO>`` block per Deep run, applied or not,
  and per approval or revert: ``- Added: N`` / ``- Merged: N`` / ``- Superseded: N`` (what changed
  MEMORY.md at that moment), then ``- Rewrite skipped: ….`` / ``- Fallback: ….`` when the
  consolidated rewrite was not used, ``- Proposed: ….`` when a proposal waits for review, and
  ``- Highlights:`` with up to 8 backquoted ``+``/``-`` entry lines.

The diary entry is a short factual summary of the run, written from its numbers — clawmem runs no
model, so it never invents anything. Every write is hash-checked; text outside the managed blocks
is kept byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from clawmem.engine.errors import ConflictError
from clawmem.engine.text_clip import clip
from clawmem.engine.workspace.names import DREAMS_FILE, DREAMS_FILES
from clawmem.engine.workspace.reading import decode_memory_bytes, sha256_bytes
from clawmem.engine.workspace.writes import MISSING, encode_text, replace_file

DIARY_START = "<!-- openclaw:dreaming:diary:start -->"
DIARY_END = "<!-- openclaw:dreaming:diary:end -->"
HISTORY_HEADING = "## Memory Consolidation History"
PHASES = {
    "light": ("## Light Sleep", "<!-- openclaw:dreaming:light:start -->", "<!-- openclaw:dreaming:light:end -->"),
    "rem": ("## REM Sleep", "<!-- openclaw:dreaming:rem:start -->", "<!-- openclaw:dreaming:rem:end -->"),
    "deep": ("## Deep Sleep", "<!-- openclaw:dreaming:deep:start -->", "<!-- openclaw:dreaming:deep:end -->"),
}
RECENT_DIARY_MAX_CHARS = 360


def dreams_path(workspace: Path) -> Path:
    for name in DREAMS_FILES:
        candidate = workspace / name
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return workspace / DREAMS_FILE


def _join_at_end(existing: str, addition: str) -> str:
    """``existing`` kept byte for byte, then one blank line, then ``addition``."""
    if not existing.strip():
        return existing + addition
    if not existing.endswith("\n"):
        existing += "\n"
    return existing + ("" if existing.endswith("\n\n") else "\n") + addition


def replace_block(original: str, heading: str, start: str, end: str, body: str) -> str:
    """Replace the managed block(s) with one current block, or append it (OpenClaw's managed blocks)."""
    block = f"{heading}\n{start}\n{body}\n{end}"
    pattern = re.compile(
        rf"(?:{re.escape(heading)}[ \t]*\n(?:[ \t]*\n)*[ \t]*)?{re.escape(start)}[\s\S]*?{re.escape(end)}"
    )
    matches = list(pattern.finditer(original))
    if not matches:
        return _join_at_end(original, block + "\n")
    out = [original[: matches[0].start()], block]
    cursor = matches[0].end()
    for m in matches[1:]:  # a duplicated managed block collapses into the first one
        out.append(original[cursor : m.start()])
        cursor = m.end()
    out.append(original[cursor:])
    return "".join(out)


def ensure_diary_section(existing: str) -> str:
    if DIARY_START in existing and DIARY_END in existing:
        return existing
    section = f"# Dream Diary\n\n{DIARY_START}\n{DIARY_END}\n"
    return section if not existing.strip() else f"{section}\n{existing}"


def append_diary_entry(existing: str, date_line: str, narrative: str) -> str:
    entry = f"\n---\n\n*{date_line}*\n\n{narrative}\n"
    if DIARY_START in existing and DIARY_END in existing:
        at = existing.rindex(DIARY_END)
        return existing[:at] + entry + "\n" + existing[at:]
    if DIARY_START in existing:
        at = existing.index(DIARY_START) + len(DIARY_START)
        return existing[:at] + entry + "\n" + DIARY_END + "\n" + existing[at:]
    section = f"# Dream Diary\n\n{DIARY_START}{entry}\n{DIARY_END}\n"
    return section if not existing.strip() else f"{section}\n{existing}"


def _with_history_heading(existing: str) -> str:
    return existing if HISTORY_HEADING in existing else _join_at_end(existing, HISTORY_HEADING + "\n")


def append_history(
    existing: str,
    timestamp: str,
    added: int,
    merged: int,
    superseded: int,
    highlights: Sequence[str],
    notes: Sequence[str] = (),
) -> str:
    """One ``### <ISO>`` block: the counts of what changed MEMORY.md, ``notes`` (``- Rewrite
    skipped: ….`` / ``- Fallback: ….`` / ``- Proposed: ….`` lines), then up to 8 highlights."""
    lines = [f"### {timestamp}", "", f"- Added: {added}", f"- Merged: {merged}", f"- Superseded: {superseded}"]
    lines += [n if n.startswith("- ") else f"- {n}" for n in notes]
    if highlights:
        lines.append("- Highlights:")
        lines += [f"  - `{h.replace('`', chr(39))}`" for h in highlights]
    return _join_at_end(_with_history_heading(existing), "\n".join(lines) + "\n")


def skipped_notes(reason: str, fallback: str = "append-only promotion") -> tuple[str, str]:
    """The spec's pair for a skipped rewrite: ``- Rewrite skipped: ….`` / ``- Fallback: ….``."""
    return f"- Rewrite skipped: {reason.rstrip('.')}.", f"- Fallback: {fallback.rstrip('.')}."


def append_reverted(existing: str, timestamp: str, proposal_id: str, preimage_key: str) -> str:
    text = (
        f"### {timestamp}\n\n- Reverted: proposal {proposal_id[:8]}.\n- Restored: MEMORY.md preimage {preimage_key}.\n"
    )
    return _join_at_end(_with_history_heading(existing), text)


def recent_diary_entries(text: str, limit: int) -> list[str]:
    """The bodies of the last ``limit`` diary entries, newest first (for Light's coverage check)."""
    if DIARY_START not in text or DIARY_END not in text:
        return []
    start = text.index(DIARY_START) + len(DIARY_START)
    end = text.index(DIARY_END, start) if DIARY_END in text[start:] else len(text)
    blocks = [b.strip() for b in re.split(r"\n---\n", text[start:end]) if b.strip()]
    bodies: list[str] = []
    for block in blocks:
        kept = [
            ln.strip()
            for ln in block.split("\n")
            if ln.strip()
            and not ln.strip().startswith(("<!--", "#"))
            and not (ln.strip().startswith("*") and ln.strip().endswith("*") and len(ln.strip()) > 2)
        ]
        body = " ".join(" ".join(kept).split())
        if body:
            bodies.append(
                body if len(body) <= RECENT_DIARY_MAX_CHARS else body[:RECENT_DIARY_MAX_CHARS].rstrip() + "..."
            )
    return list(reversed(bodies[-limit:])) if limit > 0 else []


def read_dreams(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    try:
        return decode_memory_bytes(data)[0]
    except ValueError:
        return ""


def update_dreams(path: Path, updater: Callable[[str], str], *, attempts: int = 3) -> str:
    """Read, transform and write DREAMS.md atomically; retried when it changes underneath."""
    if path.is_symlink():
        raise ConflictError(f"{path.name} is a symbolic link; clawmem does not write through links")
    for attempt in range(attempts):
        try:
            data = path.read_bytes()
            text, had_bom, newline = decode_memory_bytes(data)
            expected = sha256_bytes(data)
        except FileNotFoundError:
            text, had_bom, newline, expected = "", False, "\n", MISSING
        except ValueError as exc:
            raise ConflictError(f"{path.name} is not UTF-8 text ({exc}); Dreaming left it unchanged") from exc
        updated = updater(text)
        if not updated.endswith("\n"):
            updated += "\n"
        if updated == text:
            return text
        try:
            replace_file(path, encode_text(updated, bom=had_bom, newline=newline), expected_sha256=expected)
            return updated
        except ConflictError:
            if attempt == attempts - 1:
                raise
    return ""


# ------------------------------------------------------------------------------------------ diary


def _short(text: str, limit: int = 120) -> str:
    text = re.sub(r"^[-*+]\s+", "", " ".join(text.split()))
    return clip(text, limit)


def diary_narrative(
    *,
    light_staged: int | None,
    light_lookback: int,
    rem_themes: Sequence[str] | None,
    rem_considered: int,
    ranked: int | None,
    held_back: dict[str, int],
    written: Sequence[tuple[str, str]],  # (snippet, source) promoted into MEMORY.md now
    proposed: Sequence[tuple[str, str]],  # (snippet, source) waiting for review
    proposal_id: str | None,
    unchanged_reason: str | None,
    stale_reason: str | None,
) -> str:
    """A factual, model-free diary entry for one run."""
    parts: list[str] = []
    if light_staged is not None:
        parts.append(
            f"Light sleep staged {light_staged} recent memor{'y' if light_staged == 1 else 'ies'} "
            f"from the last {light_lookback} days."
            if light_staged
            else f"Light sleep found nothing new from the last {light_lookback} days."
        )
    if rem_themes is not None:
        if rem_themes:
            listed = ", ".join(f"`{t}`" for t in rem_themes[:3])
            parts.append(f"REM saw {listed} recur across {rem_considered} memories.")
        else:
            parts.append(f"REM found no theme strong enough across {rem_considered} memories.")
    if ranked is not None:
        if written:
            snippet, source = written[0]
            more = f" and {len(written) - 1} more" if len(written) > 1 else ""
            parts.append(f'Deep sleep promoted "{_short(snippet)}" ({source}){more} into MEMORY.md.')
        elif proposed:
            snippet, source = proposed[0]
            more = f" and {len(proposed) - 1} more" if len(proposed) > 1 else ""
            parts.append(
                f'Deep sleep proposed "{_short(snippet)}" ({source}){more} for MEMORY.md; '
                f"it waits for review as proposal {proposal_id[:8] if proposal_id else '?'}."
            )
        elif ranked:
            parts.append(
                f"Deep sleep ranked {ranked} candidate(s) but changed nothing"
                + (f": {unchanged_reason}." if unchanged_reason else ".")
            )
        else:
            parts.append("Deep sleep found nothing ready for MEMORY.md.")
        if stale_reason:
            parts.append(f"The rewrite was skipped: {stale_reason}.")
        if held_back:
            listed = ", ".join(f"{n} {why}" for why, n in sorted(held_back.items(), key=lambda kv: (-kv[1], kv[0])))
            parts.append(f"Held back: {listed}.")
    return " ".join(parts) if parts else "Nothing to report."
