"""The consolidation decision and its validation, without an LLM (docs/memory-core.md §5 Apply
2–4, 6; docs/design.md §6).

Decision, per candidate, deterministic:

- ``superseded`` when the candidate has a supersedes key (``<!-- supersedes: KEY -->`` on its
  source lines) and MEMORY.md has entries carrying ``<!-- openclaw-memory-lineage:KEY -->``, or
  when a person marked the source of a Dreaming-written entry superseded by the candidate's lines
  (``Candidate.replaces``, engine/dreaming/newer.py);
- ``merged`` when a Dreaming-written entry's normalized fact equals the candidate's snippet;
- otherwise ``added``.

A user-written entry is never merged away: a candidate whose fact the user already wrote is
skipped ("already in MEMORY.md"). "Dreaming-written" is proved, not guessed from the markers: an
entry may only be merged or superseded (and a section only dropped for the budget) when its line
is byte for byte one that an applied rewrite added (:class:`Written`). A promoted bullet the user
corrected is theirs: it is kept, and a candidate that would supersede it is appended instead.
Each candidate's line is exactly ``- <snippet> Source: <path>#L<a>-L<b> <annotations>``. The
plan is checked with OpenClaw's validation (budget, ≤ 25 % prior-entry loss, prior-entry
evidence, project groups, merge equality, lineage, exact entry multiset); any failure falls
back to the append-only section ``## Promoted From Short-Term Memory (YYYY-MM-DD)``, compacted
to the budget within the loss bound, or to no change at all when even that does not fit.

Writes only ever add to the user's text or remove whole, unchanged Dreaming-written entries (and a
Dreaming heading those removals left empty): the rewrite keeps every other byte of the file,
trailing blank lines included.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clawmem.engine.dreaming.budget import compact_for_budget
from clawmem.engine.recall import normalize_snippet
from clawmem.engine.text_clip import clip
from clawmem.engine.workspace.annotations import extract_project_keys

PROMOTION_MARKER_PREFIX = "openclaw-memory-promotion:"
CHARS_PER_TOKEN = 4
MAX_TRIGGER_CHARS = 64
HIGHLIGHT_LIMIT = 8
HIGHLIGHT_CHARS = 180
_PROMOTION_LINE = re.compile(r"^<!--\s*openclaw-memory-promotion:[^\n]+-->$")
_LINEAGE_LINE = re.compile(r"^<!--\s*openclaw-memory-lineage:([^\n]+)-->$")
_LEADING_MARKERS = re.compile(r"^(?:[-*+]\s+)+")  # one or doubled bullets ("- - text", seen in the wild)
_PROMOTION_KEYS = re.compile(r"<!--\s*openclaw-memory-promotion:([^\n]+?)\s*-->", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """A rehydrated, gate-passing candidate, ready for the decision."""

    key: str
    path: str
    start_line: int
    end_line: int
    snippet: str
    score: float
    signal_count: int
    recall_count: int
    avg_score: float
    concept_tags: tuple[str, ...]
    project_key: str | None
    supersedes_key: str | None
    # MEMORY.md entries (as they stand) whose source a person marked superseded by this candidate's
    # lines (engine/dreaming/newer.py): this candidate replaces them, with ``supersedes_key``
    replaces: tuple[str, ...] = ()

    @property
    def source_ref(self) -> str:
        return f"{self.path}#L{self.start_line}-L{self.end_line}"


@dataclass(frozen=True)
class PlannedOp:
    action: str  # added | merged | superseded
    candidate: Candidate
    result_entry: str
    prior_entries: tuple[str, ...]
    lineage_key: str | None
    conflict: str | None = None  # why this candidate cannot be consolidated in place (→ append-only)


@dataclass(frozen=True)
class Written:
    """The exact lines Dreaming added to MEMORY.md in the rewrites that are still applied.

    Built from each applied proposal's before/after text (lines of *after* not in *before*). Only
    these lines may ever be removed by Dreaming: a line the user wrote, or a Dreaming line the
    user has since changed by one byte, is not in the set, so it is never merged, superseded or
    dropped for the budget.
    """

    lines: frozenset[str] = frozenset()

    @classmethod
    def from_rewrites(cls, rewrites: Iterable[tuple[str, str]]) -> Written:
        """``rewrites``: (before_text, after_text) of every applied proposal (LF text)."""
        out: set[str] = set()
        for before, after in rewrites:
            added = Counter(after.split("\n"))
            added.subtract(Counter(before.split("\n")))
            out.update(line for line, n in added.items() if n > 0 and line.strip())
        return cls(frozenset(out))

    def __contains__(self, line: object) -> bool:
        return line in self.lines


@dataclass(frozen=True)
class Skip:
    key: str
    category: str
    reason: str


@dataclass(frozen=True)
class Plan:
    mode: str | None  # rewrite | append | None
    content: str | None  # the new MEMORY.md text (LF), None when nothing changes
    operations: tuple[PlannedOp, ...]
    skipped: tuple[Skip, ...]
    added: int
    merged: int
    superseded: int
    highlights: tuple[str, ...]
    fallback_reason: str | None  # why the rewrite was not used
    unchanged_reason: str | None  # why nothing is written although there were candidates


# ------------------------------------------------------------------------------------- entry text


def _cut(text: str, limit: int) -> str:
    return text[:limit] if limit > 0 else text


def trigger_phrase(tag: str) -> str:
    single = re.sub(r"\s+", " ", re.sub(r"[\r\n,;]+", " ", re.sub(r"<!--|-->", " ", tag))).strip()
    return single[:MAX_TRIGGER_CHARS].rstrip()


def clean_project_key(project_key: str | None) -> str | None:
    return project_key if project_key and not re.search(r"[\r\n<>]", project_key) else None


def recall_annotations(concept_tags: Sequence[str], score: float, project_key: str | None) -> str:
    """``<!-- trigger: a, b, c --> <!-- importance: N -->`` plus the optional project comment."""
    triggers = ", ".join(p for p in (trigger_phrase(t) for t in list(concept_tags)[:3]) if p)
    importance = min(10, max(3, _js_round(score * 10)))
    project = clean_project_key(project_key)
    suffix = f" <!-- project: {project} -->" if project else ""
    return f"<!-- trigger: {triggers} --> <!-- importance: {importance} -->{suffix}"


def _js_round(value: float) -> int:
    import math

    return math.floor(value + 0.5)


def promoted_text(snippet: str, max_tokens: int) -> str:
    """The snippet as a consolidated entry carries it: bullets stripped, one line, ≤ 160 tokens."""
    return _cut(re.sub(r"\s+", " ", _LEADING_MARKERS.sub("", snippet)).strip(), max_tokens * CHARS_PER_TOKEN).rstrip()


def result_entry(c: Candidate, max_tokens: int) -> str:
    snippet = promoted_text(c.snippet, max_tokens)
    return f"- {snippet} Source: {c.source_ref} {recall_annotations(c.concept_tags, c.score, c.project_key)}"


def promotion_marker(key: str) -> str:
    return f"<!-- {PROMOTION_MARKER_PREFIX}{key} -->"


def promotion_keys(content: str) -> set[str]:
    return {m.group(1).strip() for m in _PROMOTION_KEYS.finditer(content) if m.group(1).strip()}


# ---------------------------------------------------------------------------------- entry analysis


def _is_entry_line(trimmed: str) -> bool:
    return bool(trimmed) and not trimmed.startswith(("#", "<!--", "-->")) and trimmed != "```"


def extract_entries(content: str) -> list[str]:
    return [t for t in (ln.strip() for ln in content.replace("\r\n", "\n").split("\n")) if _is_entry_line(t)]


def normalize_fact(value: str) -> str:
    out = _LEADING_MARKERS.sub("", value)
    out = re.sub(r"\s+<!--\s*trigger:[^\r\n]*?-->", "", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+<!--\s*importance:\s*\d+\s*-->", "", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+<!--\s*project:\s*[^\r\n]*?-->", "", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+Source:\s+[^\r\n]+#L\d+-L\d+\s*$", "", out, flags=re.IGNORECASE)
    out = re.sub(r"\s+\[score=\d+(?:\.\d+)? signals=\d+ recalls=\d+ avg=\d+(?:\.\d+)? source=[^\]]+\]\s*$", "", out)
    return re.sub(r"\s+", " ", out).strip().lower()


def attached_lineage_key(lines: Sequence[str], index: int) -> str | None:
    if index < 1 or not _PROMOTION_LINE.match(lines[index - 1].strip()):
        return None
    m = _LINEAGE_LINE.match(lines[index - 2].strip()) if index >= 2 else None
    return m.group(1).strip() if m else None


def is_dreaming_written(lines: Sequence[str], index: int) -> bool:
    """A promotion marker sits directly above the entry (optionally with a lineage marker above it)."""
    return index >= 1 and bool(_PROMOTION_LINE.match(lines[index - 1].strip()))


def lineage_entries(content: str, key: str) -> list[str]:
    lines = content.replace("\r\n", "\n").split("\n")
    return [
        ln.strip() for i, ln in enumerate(lines) if _is_entry_line(ln.strip()) and attached_lineage_key(lines, i) == key
    ]


def has_continuation(content: str, entry: str) -> bool:
    lines = content.replace("\r\n", "\n").split("\n")
    index = next((i for i, ln in enumerate(lines) if ln.strip() == entry), -1)
    return index >= 0 and index + 1 < len(lines) and bool(re.match(r"^\s+\S", lines[index + 1]))


def matches_project_group(entry: str, project_key: str | None) -> bool:
    found = extract_project_keys(entry)
    return found.valid and "; ".join(found.keys) == (project_key or "")


# ------------------------------------------------------------------------------------------ decide


def lineage_indexes(lines: Sequence[str], key: str) -> list[int]:
    """Indexes of the entry lines that carry ``<!-- openclaw-memory-lineage:KEY -->``."""
    return [i for i, ln in enumerate(lines) if _is_entry_line(ln.strip()) and attached_lineage_key(lines, i) == key]


def entry_pristine(lines: Sequence[str], index: int, written: Written) -> bool:
    """The entry at ``index`` is Dreaming's and unchanged: marker above it and its exact line written."""
    return is_dreaming_written(lines, index) and lines[index] in written


def decide(
    existing: str, candidates: Sequence[Candidate], max_tokens: int, written: Written
) -> tuple[list[PlannedOp], list[Skip]]:
    lines = existing.replace("\r\n", "\n").split("\n")
    counts = Counter(extract_entries(existing))
    promoted = promotion_keys(existing)
    ops: list[PlannedOp] = []
    skips: list[Skip] = []
    claimed: set[str] = set()
    planned: set[str] = set()
    for c in candidates:
        if c.key in promoted:
            skips.append(Skip(c.key, "already promoted", "its promotion marker is already in MEMORY.md"))
            continue
        entry = result_entry(c, max_tokens)
        project = clean_project_key(c.project_key)
        lineage = lineage_indexes(lines, c.supersedes_key) if c.supersedes_key else []
        # … and the entries a superseded marker on their source says this candidate replaces
        lineage += [i for i, ln in enumerate(lines) if ln.strip() in c.replaces and i not in lineage][: len(c.replaces)]
        if c.supersedes_key and lineage:
            edited = [i for i in lineage if not entry_pristine(lines, i, written)]
            if edited:
                conflict = (
                    f"the entry this fact supersedes (MEMORY.md line {edited[0] + 1}) is not exactly as "
                    "clawmem wrote it (changed by hand, or from before clawmem); it is kept and the new fact "
                    "is appended"
                )
                ops.append(PlannedOp("added", c, entry, (), c.supersedes_key, conflict))
                continue
            prior = tuple(lines[i].strip() for i in lineage)
            ops.append(PlannedOp("superseded", c, entry, prior, c.supersedes_key))
            claimed.update(prior)
            continue
        fact = normalize_fact(c.snippet)
        if fact in planned:  # two recall entries of one fact (a chunk and its claim): write it once
            skips.append(Skip(c.key, "duplicate", "another candidate of this run writes the same fact"))
            continue
        planned.add(fact)
        merged_at: int | None = None
        user_copy: int | None = None
        edited_copy: int | None = None
        for i, ln in enumerate(lines):
            t = ln.strip()
            if not _is_entry_line(t) or normalize_fact(t) != fact or t in claimed:
                continue
            if not is_dreaming_written(lines, i):
                user_copy = user_copy or i + 1
                continue
            if not entry_pristine(lines, i, written):
                edited_copy = edited_copy or i + 1
                continue
            if counts[t] == 1 and not has_continuation(existing, t) and matches_project_group(t, project):
                merged_at = i
                break
        if merged_at is not None:
            prior_line = lines[merged_at].strip()
            lineage_key = attached_lineage_key(lines, merged_at) or c.supersedes_key
            ops.append(PlannedOp("merged", c, entry, (prior_line,), lineage_key))
            claimed.add(prior_line)
            continue
        if user_copy is not None:
            skips.append(
                Skip(c.key, "already in MEMORY.md", f"you already wrote this fact in MEMORY.md (line {user_copy})")
            )
            continue
        if edited_copy is not None:
            skips.append(
                Skip(
                    c.key,
                    "already in MEMORY.md",
                    f"MEMORY.md already has this fact (line {edited_copy}: a promoted entry you edited, or one "
                    "from before clawmem; kept as is)",
                )
            )
            continue
        ops.append(PlannedOp("added", c, entry, (), c.supersedes_key))
    return ops, skips


# ---------------------------------------------------------------------------------------- validate


def validate(
    previous: str,
    output: str,
    ops: Sequence[PlannedOp],
    *,
    project_key: str | None,
    max_loss: float,
    budget: int,
    max_tokens: int,
    written: Written,
) -> str | None:
    """OpenClaw's ``validateConsolidatedMemory`` (plus: only unchanged Dreaming lines are removed):
    None when valid, else why not."""
    if not output or "\0" in output:
        return "output is empty or structurally invalid"
    if len(output) > budget:
        return f"output exceeds the MEMORY.md budget ({len(output)} > {budget})"
    prior = extract_entries(previous)
    nxt = extract_entries(output)
    previous_lines = previous.replace("\r\n", "\n").split("\n")
    remaining = Counter(nxt)
    retained = 0
    for entry in prior:
        if remaining[entry] > 0:
            retained += 1
            remaining[entry] -= 1
    lost = 0.0 if not prior else (len(prior) - retained) / len(prior)
    if lost > max_loss:
        return f"output loses {lost * 100:.1f}% of prior entries"
    prior_set, prior_counts, next_set = set(prior), Counter(prior), set(nxt)
    if len({op.candidate.key for op in ops}) != len(ops):
        return "output operations do not identify each candidate exactly once"
    for op in ops:
        c = op.candidate
        expected = result_entry(c, max_tokens)
        visible = op.result_entry
        visible = re.sub(r"^[-*+]\s+", "", visible).replace(f"Source: {c.source_ref}", "", 1)
        visible = re.sub(r"<!--[\s\S]*?-->", "", visible).strip()
        if (
            not re.match(r"^[-*+]\s+\S", op.result_entry)
            or op.result_entry != expected
            or not re.sub(r"[^\w]|_", "", visible)
            or len(visible) > max_tokens * CHARS_PER_TOKEN
            or f"Source: {c.source_ref}" not in op.result_entry
            or op.result_entry not in next_set
        ):
            return f"output does not place candidate {c.key} in a substantive sourced entry"
        if (
            (op.action == "added" and op.prior_entries)
            or (op.action != "added" and not op.prior_entries)
            or any(e not in prior_set or prior_counts[e] > 1 or has_continuation(previous, e) for e in op.prior_entries)
            or (op.action == "added" and op.result_entry in prior_set)
        ):
            return f"output has invalid prior-entry evidence for candidate {c.key}"
        if any(not any(ln.strip() == e and ln in written for ln in previous_lines) for e in op.prior_entries):
            return f"output removes an entry that Dreaming did not write as it stands for candidate {c.key}"
        if any(not matches_project_group(e, project_key) for e in op.prior_entries):
            return f"output crosses project groups for candidate {c.key}"
        if op.action == "merged" and any(normalize_fact(e) != normalize_fact(c.snippet) for e in op.prior_entries):
            return f"output merges candidate {c.key} with an unrelated prior entry"
        if op.action == "superseded" and not c.supersedes_key:
            return f"output supersedes candidate {c.key} without matching lineage"
        stale = lineage_entries(previous, c.supersedes_key) if c.supersedes_key else []
        if stale and (op.action != "superseded" or Counter(op.prior_entries) != Counter(stale)):
            return f"output leaves stale lineage for candidate {c.key}"
    removed = Counter(e for op in ops for e in op.prior_entries)
    if any(n > prior_counts[e] for e, n in removed.items()):
        return "output removes more prior-entry occurrences than exist"
    expected_counts = Counter(prior_counts)
    expected_counts.subtract(removed)
    for entry in {op.result_entry for op in ops}:
        expected_counts[entry] += 1
    if +expected_counts != Counter(nxt):
        return "output entries do not exactly match validated operations"
    return None


# ------------------------------------------------------------------------------------------- apply


_GENERATED_SECTION = re.compile(r"^## (?:Promoted From Short-Term Memory|Consolidated Memory) \([^)]+\)\s*$")
_GENERATED_SUBSECTION = re.compile(r"^### (?:Global|Project: .+?)\s*$")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def _drop_emptied_headings(lines: list[str | None], removed_at: Sequence[int], written: Written) -> list[str]:
    """Remove the generated headings whose section became empty because entries were removed at
    ``removed_at`` (``None`` marks a removed line). A heading is removed only when Dreaming wrote
    it, its section lost an entry in this plan, and nothing but blank lines is left under it —
    so a heading the user wrote content under (or an already empty one) always stays."""

    def heading_above(pos: int, pattern: re.Pattern[str]) -> int | None:
        for i in range(min(pos, len(lines) - 1), -1, -1):
            ln = lines[i]
            if ln is None:
                continue
            if _ATX_HEADING.match(ln):
                return i if pattern.match(ln) and ln in written else None
        return None

    def body_blank(head: int, level: int) -> list[int] | None:
        body: list[int] = []
        for i in range(head + 1, len(lines)):
            ln = lines[i]
            if ln is None:
                continue
            if _ATX_HEADING.match(ln) and len(ln) - len(ln.lstrip("#")) <= level:
                break
            if ln.strip():
                return None
            body.append(i)
        return body

    for pattern, level in ((_GENERATED_SUBSECTION, 3), (_GENERATED_SECTION, 2)):
        for pos in sorted(set(removed_at), reverse=True):
            head = heading_above(pos, pattern)
            if head is None:
                continue
            body = body_blank(head, level)
            if body is None:
                continue
            lines[head] = None
            if body and body[0] == head + 1:  # the blank line Dreaming wrote with the heading; other
                lines[body[0]] = None  # blank lines may be the user's layout and stay
    return [ln for ln in lines if ln is not None]


def apply_plan(
    existing: str, ops: Sequence[PlannedOp], *, day: str, budget: int, max_loss: float, written: Written
) -> str | None:
    """OpenClaw's ``applyMemoryConsolidationPlan``: remove prior entries, append the dated section.

    A generated heading left with nothing under it by the removals goes too (never a user's)."""
    current = extract_entries(existing)
    removed = sum(len(op.prior_entries) for op in ops)
    if current and removed / len(current) > max_loss:
        return None
    lines: list[str | None] = list(existing.replace("\r\n", "\n").split("\n"))
    removed_at: list[int] = []

    def live() -> str:
        return "\n".join(ln for ln in lines if ln is not None)

    lineage_by_key: dict[str, str | None] = {}
    for op in ops:
        if any(ln is not None and promotion_marker(op.candidate.key) in ln for ln in lines):
            return None
        entries_now = extract_entries(live())
        if entries_now.count(op.result_entry) > sum(1 for e in op.prior_entries if e == op.result_entry):
            return None
        lineage = op.lineage_key
        expected = set(lineage_entries(live(), lineage or "")) | set(op.candidate.replaces)
        if op.action == "superseded" and Counter(op.prior_entries) != Counter(expected):
            return None
        for prior in op.prior_entries:
            index = next((i for i, ln in enumerate(lines) if ln is not None and ln.strip() == prior), -1)
            if index < 0:
                return None
            view = [ln if ln is not None else "" for ln in lines]
            attached = attached_lineage_key(view, index)
            # a replaced entry without a lineage marker of its own takes the candidate's (newer.py)
            adopted = attached is None and prior in op.candidate.replaces
            if op.action == "superseded" and attached != lineage and not adopted:
                return None
            if op.action == "merged" and attached:
                if lineage and lineage != attached:
                    return None
                lineage = attached
            start = index - 2 if attached else index
            if start == index and index >= 1 and _PROMOTION_LINE.match(view[index - 1].strip()):
                start -= 1
            if not attached and start >= 1 and _LINEAGE_LINE.match(view[start - 1].strip()):
                start -= 1
            for i in range(start, index + 1):
                lines[i] = None
            removed_at.append(start)
        lineage_by_key[op.candidate.key] = lineage
    additions = [f"## Consolidated Memory ({day})", ""]
    appended: set[str] = set()
    for op in ops:
        lineage = lineage_by_key.get(op.candidate.key)
        if lineage:
            additions.append(f"<!-- openclaw-memory-lineage:{lineage} -->")
        additions.append(promotion_marker(op.candidate.key))
        if op.result_entry not in appended:
            additions.append(op.result_entry)
            appended.add(op.result_entry)
    kept = _drop_emptied_headings(lines, removed_at, written) if removed_at else [ln for ln in lines if ln is not None]
    content = _append_block("\n".join(kept), "\n".join(additions))
    return None if len(content) > max(1, budget) else content


def _append_block(base: str, block: str) -> str:
    """Keep every byte of ``base`` and add ``block`` after one blank line."""
    if not base.strip():
        head = base if base.endswith("\n") or not base else base + "\n"
        return f"{head}# Long-Term Memory\n\n{block}\n" if not head.strip() else f"{head}\n{block}\n"
    if not base.endswith("\n"):
        base += "\n"
    sep = "" if base.endswith("\n\n") else "\n"
    return f"{base}{sep}{block}\n"


def _highlight(sign: str, entry: str) -> str:
    text = f"{sign} {entry}"
    return clip(text, HIGHLIGHT_CHARS)


def highlights(previous: str, nxt: str) -> tuple[str, ...]:
    """Up to 8 ``+``/``-`` lines (≤ 180 chars): the entries added, then the entries removed.

    Only entries count — headings, promotion and lineage markers are scaffolding a reader of
    the history does not need."""
    before = list(dict.fromkeys(extract_entries(previous)))
    after = list(dict.fromkeys(extract_entries(nxt)))
    before_set, after_set = set(before), set(after)
    out = [_highlight("+", ln) for ln in after if ln not in before_set]
    out += [_highlight("-", ln) for ln in before if ln not in after_set]
    return tuple(out[:HIGHLIGHT_LIMIT])


# ---------------------------------------------------------------------------------- append fallback


def _truncate_for_memory(snippet: str, max_tokens: int) -> str:
    text = _LEADING_MARKERS.sub("", normalize_snippet(snippet or "(no snippet captured)")).strip()
    text = text or "(no snippet captured)"
    limit = max_tokens * CHARS_PER_TOKEN
    if limit == 0 or len(text) <= limit:
        return text
    hard = text[:limit]
    sentence = max(hard.rfind(". "), hard.rfind("! "), hard.rfind("? "))
    word = hard.rfind(" ")
    if sentence >= int(limit * 0.55):
        cut = sentence + 1
    elif word >= int(limit * 0.65):
        cut = word
    else:
        cut = limit
    return f"{hard[:cut].rstrip()}..."


def promotion_section(candidates: Sequence[Candidate], day: str, max_tokens: int) -> str:
    """``## Promoted From Short-Term Memory (day)``, grouped by project when there are several."""
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(clean_project_key(c.project_key) or "", []).append(c)
    ordered = sorted(groups.items())
    lines = ["", f"## Promoted From Short-Term Memory ({day})", ""]
    for project, members in ordered:
        if len(ordered) > 1:
            lines += [f"### Project: {project}" if project else "### Global", ""]
        for c in members:
            meta = (
                f"[score={c.score:.3f} signals={c.signal_count} recalls={c.recall_count} avg={c.avg_score:.3f} "
                f"source={c.path}:{c.start_line}-{c.end_line}]"
            )
            lines.append(promotion_marker(c.key))
            lines.append(
                f"- {_truncate_for_memory(c.snippet, max_tokens)} {meta} "
                f"{recall_annotations(c.concept_tags, c.score, c.project_key)}"
            )
        if len(ordered) > 1:
            lines.append("")
    lines.append("")
    return "\n".join(lines)


def append_fallback(
    existing: str,
    candidates: Sequence[Candidate],
    *,
    day: str,
    budget: int,
    max_loss: float,
    max_tokens: int,
    written: Written,
) -> str | None:
    """The append-only section, after dropping pristine generated sections for the budget; None
    when it still does not fit (MEMORY.md then stays unchanged)."""
    section = promotion_section(candidates, day, max_tokens)
    base = compact_for_budget(existing, section, budget, max_loss, written=written.lines)
    header = "" if base.strip() else "# Long-Term Memory\n\n"
    body = base if not base or base.endswith("\n") else base + "\n"
    content = f"{header}{body}{section}"
    return None if budget > 0 and len(content) > budget else content


# --------------------------------------------------------------------------------------------- plan


def plan(
    existing: str,
    candidates: Sequence[Candidate],
    *,
    day: str,
    budget: int,
    max_loss: float,
    max_tokens: int,
    written: Written,
) -> Plan:
    """Decide, validate and write the MEMORY.md change; ``written`` holds the lines Dreaming added
    in applied rewrites (the only lines it may remove)."""
    ops, skips = decide(existing, candidates, max_tokens, written)
    if not ops:
        return Plan(None, None, (), tuple(skips), 0, 0, 0, (), None, None)
    reason = next((op.conflict for op in ops if op.conflict), None)
    groups: dict[str, list[PlannedOp]] = {}
    for op in ops:
        groups.setdefault(clean_project_key(op.candidate.project_key) or "", []).append(op)
    for project, group_ops in sorted(groups.items()):
        if reason:
            break
        group_content = apply_plan(existing, group_ops, day=day, budget=budget, max_loss=max_loss, written=written)
        if group_content is None:
            reason = "the consolidated MEMORY.md would exceed the budget or the prior-entry loss bound"
            break
        reason = validate(
            existing,
            group_content,
            group_ops,
            project_key=project or None,
            max_loss=max_loss,
            budget=budget,
            max_tokens=max_tokens,
            written=written,
        )
        if reason:
            break
    content = None if reason else apply_plan(existing, ops, day=day, budget=budget, max_loss=max_loss, written=written)
    if content is None and reason is None:
        reason = "the combined consolidation plan is invalid"
    if content is not None:
        return Plan(
            "rewrite",
            content,
            tuple(ops),
            tuple(skips),
            sum(op.action == "added" for op in ops),
            sum(op.action == "merged" for op in ops),
            sum(op.action == "superseded" for op in ops),
            highlights(existing, content),
            None,
            None,
        )
    added_ops = tuple(PlannedOp("added", op.candidate, op.result_entry, (), op.lineage_key) for op in ops)
    fallback = append_fallback(
        existing,
        [op.candidate for op in ops],
        day=day,
        budget=budget,
        max_loss=max_loss,
        max_tokens=max_tokens,
        written=written,
    )
    if fallback is None:
        budget_skips = tuple(
            Skip(op.candidate.key, "memory budget", f"MEMORY.md would exceed {budget} characters") for op in ops
        )
        return Plan(
            None,
            None,
            (),
            (*skips, *budget_skips),
            0,
            0,
            0,
            (),
            reason,
            f"even the append-only section would exceed the MEMORY.md budget ({budget} characters)",
        )
    return Plan(
        "append", fallback, added_ops, tuple(skips), len(added_ops), 0, 0, highlights(existing, fallback), reason, None
    )
