"""engine.context: what a bare /new loads (budgets, cuts, lines) and Active Memory lane 1."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest
from clawmem.engine.context import service as ctxmod
from clawmem.engine.context.budget import render, trim_bootstrap, u16len
from clawmem.engine.context.trigger_recall import MessageWords, score_entry, score_phrase
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine

from tests.conftest import STORE_URL, make_settings


def engine_at(
    home: Path, workspace: Path, now: str | None = None, timezone: str | None = None, **overrides: dict[str, object]
) -> MemoryEngine:
    settings = make_settings(home, workspace, embedding={"provider": "none"}, **overrides)
    changes: dict[str, object] = {}
    if now:
        changes["now"] = now
    if timezone:
        changes["timezone"] = timezone
    return MemoryEngine(dataclasses.replace(settings, **changes))


def by_path(ctx: ctxmod.StartupContext) -> dict[str, ctxmod.StartupFile]:
    return {f.path: f for f in ctx.files}


def big_memory(workspace: Path, n: int = 399) -> str:
    lines = ["# Long-Term Memory", ""] + [
        f"- Fact {i:03d}: the quick brown fox jumps over the lazy dog {i}." for i in range(1, n + 1)
    ]
    text = "\n".join(lines) + "\n"
    (workspace / "MEMORY.md").write_text(text, encoding="utf-8")
    return text


# --------------------------------------------------------------------------- OpenClaw's own trim cases


def test_trim_bootstrap_matches_openclaw_examples() -> None:
    long = "HEAD-" + "a" * 600 + "b" * 300 + "-TAIL"
    t = trim_bootstrap(long, "SOUL.md", 200)
    out = render(t.pieces)
    assert (t.head, t.tail, len(out)) == (75, 25, 199)  # OpenClaw's test: "kept 75+25", length 199
    assert out.startswith(long[:75]) and out.endswith(long[-25:])
    assert "[...truncated, read SOUL.md for full content...]" in out
    assert "…(truncated SOUL.md: kept 75+25 chars of 910)…" in out
    tiny = "HEAD-" + "a" * 1000 + "-TAIL"
    compact = render(trim_bootstrap(tiny, "USER.md", 64).pieces)
    assert len(compact) <= 64 and compact.startswith("HEAD-") and compact.endswith("-TAIL") and "truncated" in compact
    assert render(trim_bootstrap(tiny, "USER.md", 22).pieces) == "H[…truncated 1+0/1010]"


def test_trim_counts_utf16_units_and_never_splits_a_pair() -> None:
    text = "h" * 73 + "😀" + "m" * 200 + "😀" + "t" * 23
    out = render(trim_bootstrap(text, "SOUL.md", 200).pieces)
    assert u16len(out) <= 200
    assert out.startswith("h" * 73) and out.endswith("t" * 23)
    assert all(not (0xD800 <= ord(ch) <= 0xDFFF) for ch in out)


# --------------------------------------------------------------------------- startup: the fixture


def test_fixture_private_session_loads_user_memory_then_yesterdays_note(fts_engine: MemoryEngine) -> None:
    ctx = fts_engine.context.startup()
    loaded = [(f.order, f.path) for f in ctx.loaded]
    assert loaded == [(1, "USER.md"), (2, "MEMORY.md"), (3, "memory/2026-11-04.md")]
    # 11-05 has no note; with daily_memory_days=2 only today and yesterday are scanned, so the
    # slug note of 11-03 and the 11-02 diary are not even candidates.
    assert ctx.days_scanned == ("2026-11-05", "2026-11-04")
    assert ctx.days_selected == ("2026-11-04",)
    assert "memory/2026-11-03-hotel-call.md" not in by_path(ctx)
    assert ctx.warnings == ()
    files = by_path(ctx)
    memory_text = (fts_engine.workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert files["MEMORY.md"].injected_text == memory_text.rstrip()
    assert files["MEMORY.md"].cap == 20_000 and files["USER.md"].cap == 4_000
    assert ctx.bootstrap_budget.used == files["USER.md"].chars_injected + files["MEMORY.md"].chars_injected
    assert ctx.bootstrap_budget.cap == 60_000
    note = files["memory/2026-11-04.md"]
    assert ctx.startup_prelude is not None and note.injected_text in ctx.startup_prelude
    assert note.injected_text.startswith(
        "[Untrusted daily memory: memory/2026-11-04.md]\nBEGIN_QUOTED_NOTES\n```text\n"
    )
    assert note.injected_text.endswith("\n```\nEND_QUOTED_NOTES")
    assert ctx.startup_prelude.startswith("[Startup context loaded by runtime]\n")
    assert ctx.startup_budget.used == u16len(note.injected_text)


def test_superseded_user_entry_is_omitted_and_not_counted(fts_engine: MemoryEngine) -> None:
    user = by_path(fts_engine.context.startup())["USER.md"]
    assert [(o.start_line, o.end_line, o.observed) for o in user.omitted] == [(3, 4, "2026-03-02")]
    assert {s.line: s.status for s in user.lines}[3] == "omitted"
    assert {s.line: s.status for s in user.lines}[4] == "omitted"
    assert "坐高铁出行，不坐飞机" not in user.injected_text
    assert "短途旅行坐高铁" in user.injected_text
    raw = (fts_engine.workspace / "USER.md").read_text(encoding="utf-8").split("\n")
    remaining = "\n".join(raw[:2] + raw[4:]).rstrip()
    assert user.chars_considered == len(remaining) == user.chars_injected
    assert user.chars_on_disk > user.chars_considered
    assert not user.truncated and user.cut_ranges == ()


def test_a_superseded_memory_md_entry_never_loads(fts_engine: MemoryEngine) -> None:
    # a changed fact (issue 36): the old version stays in the file, marked, and out of the session
    path = fts_engine.workspace / "MEMORY.md"
    text = path.read_text(encoding="utf-8")
    first_bullet = next(i for i, ln in enumerate(text.split("\n")) if ln.startswith("- "))
    lines = text.split("\n")
    old = lines[first_bullet]
    lines.insert(first_bullet, "<!-- observed: 2026-03-02 | status: superseded | by: memory/2026-11-01.md#3 -->")
    path.write_text("\n".join(lines), encoding="utf-8")
    memory = by_path(fts_engine.context.startup())["MEMORY.md"]
    assert [(o.start_line, o.end_line) for o in memory.omitted] == [(first_bullet + 1, first_bullet + 2)]
    assert old not in memory.injected_text and memory.loaded
    assert "status: superseded" not in memory.injected_text


def test_a_memory_md_with_cr_only_line_ends_loads(fts_engine: MemoryEngine) -> None:
    # was an IndexError in the superseded-entry scan (markdown-it splits on CR, the scan did not)
    path = fts_engine.workspace / "MEMORY.md"
    path.write_bytes(b"- old <!-- observed: 2026-03-02 | status: superseded -->\r- kept fact\r")
    memory = by_path(fts_engine.context.startup())["MEMORY.md"]
    assert memory.loaded and "kept fact" in memory.injected_text


def test_user_md_measured_after_superseded_entries_are_removed(home: Path, workspace: Path) -> None:
    old = "".join(
        f"<!-- observed: 2026-01-{i:02d} | status: superseded -->\n- Prefer old habit {i} " + "x" * 80 + "\n"
        for i in range(1, 29)
    )
    active = "<!-- observed: 2026-10-01 | status: active -->\n- Prefer tea over coffee.\n"
    (workspace / "USER.md").write_text("# User\n\n" + old + active, encoding="utf-8")
    with engine_at(home, workspace) as e:
        user = by_path(e.context.startup())["USER.md"]
    assert user.chars_on_disk > 4_000  # over the cap on disk …
    assert not user.truncated and user.loaded  # … but not once superseded entries are gone
    assert len(user.omitted) == 28
    assert user.injected_text == "# User\n\n<!-- observed: 2026-10-01 | status: active -->\n- Prefer tea over coffee."


# --------------------------------------------------------------------------- startup: oversized files


def test_oversized_memory_md_keeps_head_and_tail_and_names_the_cut_lines(home: Path, workspace: Path) -> None:
    text = big_memory(workspace)
    before = hashlib.sha256((workspace / "MEMORY.md").read_bytes()).hexdigest()
    with engine_at(home, workspace) as e:
        ctx = e.context.startup()
    m = by_path(ctx)["MEMORY.md"]
    considered = len(text.rstrip())
    assert m.loaded and m.truncated and m.chars_considered == considered == 24_250
    assert u16len(m.injected_text) == m.chars_injected <= 20_000
    head, tail = m.injected_text.split("\n\n[...truncated, read MEMORY.md for full content...]\n")
    marker, _, kept_tail = tail.partition("\n\n")
    h, t = (int(x) for x in marker.split("kept ")[1].split(" chars")[0].split("+"))
    assert marker == f"…(truncated MEMORY.md: kept {h}+{t} chars of {considered})…"
    assert head == text[:h] and kept_tail == text.rstrip()[-t:]
    assert m.chars_cut == considered - h - t
    (cut,) = m.cut_ranges  # one run in the middle
    states = {s.line: s.status for s in m.lines}
    assert states[1] == "kept" and states[cut.start - 1] == "kept" and states[401] == "kept"
    assert {states[n] for n in range(cut.start, cut.end + 1)} <= {"cut", "partial"}
    assert states[cut.end] == "partial"  # the tail starts inside a line
    assert states[402] == "trimmed"  # the empty line after the final newline
    expected = (
        f"MEMORY.md is 24,250 chars; {m.chars_cut:,} chars (lines {cut.start}–{cut.end}) will not be loaded "
        "(head+tail, per-file cap 20,000)"
    )
    assert ctx.warnings == (expected,)
    after = hashlib.sha256((workspace / "MEMORY.md").read_bytes()).hexdigest()
    assert before == after  # only the injected copy is truncated


def test_oversized_user_md_is_capped_at_4000(home: Path, workspace: Path) -> None:
    body = "".join(
        f"<!-- observed: 2026-10-01 | status: active -->\n- Prefer item {i:03d} " + "y" * 60 + "\n" for i in range(80)
    )
    (workspace / "USER.md").write_text("# User\n" + body, encoding="utf-8")
    with engine_at(home, workspace) as e:
        user = by_path(e.context.startup())["USER.md"]
    assert user.chars_considered > 4_000
    assert user.truncated and user.chars_injected <= 4_000
    assert "[...truncated, read USER.md for full content...]" in user.injected_text
    assert user.truncation == "head+tail, per-file cap 4,000"


def test_total_budget_is_shared_in_load_order(home: Path, workspace: Path) -> None:
    big_memory(workspace)
    with engine_at(home, workspace, bootstrap={"total_max_chars": 5_000}) as e:
        ctx = e.context.startup()
    files = by_path(ctx)
    user, memory = files["USER.md"], files["MEMORY.md"]
    assert user.budget_remaining == 5_000 and not user.truncated
    assert memory.budget_remaining == 5_000 - user.chars_injected
    assert memory.truncated and memory.chars_injected <= memory.budget_remaining
    assert memory.truncation == f"head+tail, total budget {memory.budget_remaining:,}"
    assert ctx.bootstrap_budget.used <= 5_000


def test_other_bootstrap_files_use_the_budget_first(home: Path, workspace: Path) -> None:
    (workspace / "SOUL.md").write_text("s" * 9_990, encoding="utf-8")
    with engine_at(home, workspace, bootstrap={"total_max_chars": 10_000}) as e:
        ctx = e.context.startup()
    files = by_path(ctx)
    assert files["SOUL.md"].loaded and files["SOUL.md"].kind == "bootstrap" and files["SOUL.md"].order == 1
    for name in ("USER.md", "MEMORY.md"):
        assert not files[name].loaded
        assert files[name].reason == "only 10 chars of the bootstrap budget were left (< 64)"
    assert any(w.startswith("USER.md is not loaded: only 10 chars") for w in ctx.warnings)


# --------------------------------------------------------------------------- startup: session kinds, provenance


@pytest.mark.parametrize("kind", ["group", "cron", "subagent"])
def test_memory_files_load_only_in_private_sessions(fts_engine: MemoryEngine, kind: str) -> None:
    files = by_path(fts_engine.context.startup(kind))
    for name in ("USER.md", "MEMORY.md"):
        assert not files[name].loaded
        assert files[name].reason == f"{name} is loaded only in private main sessions (docs/memory-core.md §1)"
    note = files["memory/2026-11-04.md"]
    assert note.loaded is (kind == "group")
    if kind != "group":
        assert kind in (note.reason or "")


def test_unknown_kind_is_a_user_error(fts_engine: MemoryEngine) -> None:
    with pytest.raises(ClawmemError, match="unknown session kind 'channel'"):
        fts_engine.context.startup("channel")


def test_untrusted_provenance_keeps_memory_md_out(fts_engine: MemoryEngine) -> None:
    fts_engine.sync()
    with fts_engine.store.write() as conn:  # what a flush with an untrusted segment will record
        conn.execute(
            "UPDATE memory_index_chunk_provenance SET origin_class = 'untrusted' "
            "WHERE chunk_id IN (SELECT id FROM memory_index_chunks WHERE path = 'MEMORY.md')"
        )
    memory = by_path(fts_engine.context.startup())["MEMORY.md"]
    assert not memory.loaded
    assert memory.eligibility is not None and not memory.eligibility.eligible
    assert memory.reason == "MEMORY.md has untrusted content (auto-injection needs owner or agent origin)"


# --------------------------------------------------------------------------- startup: daily notes


def test_slug_note_of_today_loads_first(home: Path, workspace: Path) -> None:
    with engine_at(home, workspace, now="2026-11-03T09:00:00+00:00") as e:
        ctx = e.context.startup()
    assert ctx.days_selected == ("2026-11-03", "2026-11-02")
    assert [f.path for f in ctx.loaded if f.kind == "daily"] == [
        "memory/2026-11-03-hotel-call.md",
        "memory/2026-11-02.md",
    ]
    assert ctx.startup_prelude is not None
    assert ctx.startup_prelude.index("memory/2026-11-03-hotel-call.md") < ctx.startup_prelude.index(
        "memory/2026-11-02.md"
    )


def test_one_day_setting_uses_yesterday_only_for_session_summaries(home: Path, workspace: Path) -> None:
    with engine_at(home, workspace, bootstrap={"daily_memory_days": 1}) as e:
        ctx = e.context.startup()
    assert ctx.days_scanned == ("2026-11-05", "2026-11-04") and ctx.days_selected == ()
    assert ctx.startup_prelude is None
    note = by_path(ctx)["memory/2026-11-04.md"]
    assert not note.loaded and "not selected" in (note.reason or "")
    path = workspace / "memory" / "2026-11-04.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n<!-- openclaw:session-memory-summary -->\n", encoding="utf-8")
    with engine_at(home, workspace, bootstrap={"daily_memory_days": 1}) as e:
        ctx = e.context.startup()
    assert ctx.days_selected == ("2026-11-04",)
    assert by_path(ctx)["memory/2026-11-04.md"].loaded


def test_utc_day_ahead_of_local_day_is_added(home: Path, workspace: Path) -> None:
    (workspace / "memory" / "2026-11-05.md").write_text("# 2026-11-05\n\n- UTC-day note.\n", encoding="utf-8")
    with engine_at(home, workspace, now="2026-11-05T03:00:00+00:00", timezone="America/Los_Angeles") as e:
        ctx = e.context.startup()
    assert (ctx.local_date, ctx.utc_date) == ("2026-11-04", "2026-11-05")
    assert ctx.days_scanned == ("2026-11-04", "2026-11-03", "2026-11-05")
    assert ctx.days_selected == ("2026-11-04", "2026-11-05")
    assert [f.path for f in ctx.loaded if f.kind == "daily"] == ["memory/2026-11-04.md", "memory/2026-11-05.md"]


def test_long_note_keeps_only_its_head(home: Path, workspace: Path) -> None:
    lines = ["# today"] + [f"- 今天的第{i}条记录，内容比较长一些以便超过上限。" for i in range(80)]
    (workspace / "memory" / "2026-11-05.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with engine_at(home, workspace) as e:
        ctx = e.context.startup()
    note = by_path(ctx)["memory/2026-11-05.md"]
    assert note.loaded and note.truncated and note.truncation == "head only, per-file cap 1,200"
    assert note.injected_text.endswith("\n...[truncated]...\n```\nEND_QUOTED_NOTES")
    states = {s.line: s.status for s in note.lines}
    first_cut = note.cut_ranges[0].start
    assert states[first_cut] == "partial" and states[first_cut - 1] == "kept" and states[81] == "cut"
    assert note.cut_ranges[0].end == 81
    assert note.chars_considered - note.chars_cut == 1_200
    assert any(w.startswith("memory/2026-11-05.md is ") for w in ctx.warnings)


def test_startup_notes_share_a_2800_char_budget(home: Path, workspace: Path) -> None:
    body = "\n".join(f"- line {i} " + "z" * 40 for i in range(40))
    for name in ("2026-11-05.md", "2026-11-05-call.md", "2026-11-04.md", "2026-11-04-extra.md"):
        (workspace / "memory" / name).write_text(body + "\n", encoding="utf-8")
    with engine_at(home, workspace) as e:
        ctx = e.context.startup()
    order = ["memory/2026-11-05.md", "memory/2026-11-04.md", "memory/2026-11-05-call.md", "memory/2026-11-04-extra.md"]
    files = by_path(ctx)
    assert [f.path for f in ctx.loaded if f.kind == "daily"] == order[:3]
    assert files[order[2]].truncation == (
        f"head only, per-file cap 1,200 and {files[order[2]].budget_remaining:,} chars left in the startup-notes budget"
    )
    assert not files[order[3]].loaded and "budget is used up" in (files[order[3]].reason or "")
    assert ctx.startup_budget.used <= 2_800
    assert ctx.startup_prelude is not None
    assert ctx.startup_prelude.endswith("\n...[additional startup memory truncated]...")


def test_note_over_16k_bytes_is_skipped_not_truncated(home: Path, workspace: Path) -> None:
    (workspace / "memory" / "2026-11-05.md").write_text("- big\n" * 3_000, encoding="utf-8")
    with engine_at(home, workspace) as e:
        ctx = e.context.startup()
    note = by_path(ctx)["memory/2026-11-05.md"]
    assert not note.loaded and (note.reason or "").startswith("larger than 16,384 bytes (18,000)")
    assert ctx.days_selected == ("2026-11-04",)
    assert any(w.startswith("memory/2026-11-05.md is not loaded: larger than 16,384 bytes") for w in ctx.warnings)


# --------------------------------------------------------------------------- triggers: scoring


def test_phrase_scoring_follows_openclaw() -> None:
    msg = MessageWords.of("Is the billing review moved?")
    one = score_phrase("billing", msg)
    assert one.score == one.openclaw_score == 0.85
    multi = score_phrase("billing migration review", msg)
    assert multi.overlap == 2 and multi.coverage == pytest.approx(2 / 3)
    assert multi.score == pytest.approx(2 / 3 * 0.8 + 1.0 * 0.2)
    assert score_phrase("car", MessageWords.of("a carpet")).score == 0  # whole words outside CJK
    assert score_phrase("x", msg).score == 0  # one-letter words do not count
    s = score_entry("billing; nothing here", 1.7, msg)
    assert s.relevance == 1.0 and s.match_score == pytest.approx(0.85 * 0.8 + 0.2)
    assert score_entry(None, 1.0, msg).match_score == 0.0  # no trigger: never a match


def test_cjk_trigger_found_inside_a_sentence() -> None:
    msg = MessageWords.of("周末去杭州的车票订好了吗")
    assert msg.words == frozenset({"周末去杭州的车票订好了吗"})
    p = score_phrase("杭州", msg)
    assert (p.score, p.openclaw_score, p.cjk_match) == (0.85, 0, True)


# --------------------------------------------------------------------------- triggers: the lane


def append_memory(workspace: Path, lines: list[str]) -> None:
    path = workspace / "MEMORY.md"
    path.write_text(path.read_text(encoding="utf-8") + "\n".join(lines) + "\n", encoding="utf-8")


def test_fixture_chinese_message_injects_two_entries(fts_engine: MemoryEngine) -> None:
    fts_engine.sync()
    p = fts_engine.context.triggers("周末去杭州的车票订好了吗")
    assert [(c.path, c.start_line, c.outcome) for c in p.injected] == [
        ("MEMORY.md", 4, "injected"),
        ("MEMORY.md", 6, "injected"),
    ]
    assert p.block == (
        "Context:\n<active_memory_plugin>\n"
        "- - 杭州周末行预算上限 3000 元（两人）。 (Source: MEMORY.md#L4)\n"
        "- - 返程车票尚未确认，需要在周五前订好。 (Source: MEMORY.md#L6)\n"
        "</active_memory_plugin>"
    )
    by_line = {(c.path, c.start_line): c for c in p.candidates}
    l4 = by_line[("MEMORY.md", 4)]
    assert l4.match_score == pytest.approx(0.68) and l4.openclaw_match_score == 0.0 and l4.rank == 1
    assert [(ph.phrase, ph.score) for ph in l4.phrases] == [("杭州", 0.85), ("预算", 0.0)]
    assert by_line[("MEMORY.md", 5)].outcome == "weak"
    diary = by_line[("memory/2026-10-30.md", 1)]
    assert diary.outcome == "ineligible" and "daily notes never" in diary.eligibility


def test_project_scope_and_whole_word_rule(fts_engine: MemoryEngine) -> None:
    append_memory(
        fts_engine.workspace,
        [
            "- Billing review happens on Thursdays. <!-- trigger: billing migration review --> "
            "<!-- project: github.com/acme/billing -->",
        ],
    )
    fts_engine.sync()
    msg = "the billing migration review moved again"
    entry = next(c for c in fts_engine.context.triggers(msg).candidates if c.start_line == 13)
    assert entry.outcome == "ineligible" and entry.eligibility == "project github.com/acme/billing is not active"
    p = fts_engine.context.triggers(msg, ("GitHub.com/acme/billing",))
    entry = next(c for c in p.candidates if c.start_line == 13)
    assert p.active_projects == ("github.com/acme/billing",)
    assert entry.outcome == "injected" and entry.trigger_score == 1.0
    assert entry.match_score == pytest.approx(0.8 + 0.2 * entry.relevance)


@pytest.mark.skipif(STORE_URL is not None, reason="it edits the local SQLite index behind the engine's back")
def test_superseded_invalid_project_and_untrusted_are_never_injected(fts_engine: MemoryEngine) -> None:
    user = fts_engine.workspace / "USER.md"
    text = user.read_text(encoding="utf-8")
    text = text.replace("- Prefer 坐高铁出行，不坐飞机。", "- Prefer 坐高铁出行，不坐飞机。 <!-- trigger: 高铁 -->")
    text = text.replace(
        "公里坐飞机。 <!-- supersedes: travel-mode -->",
        "公里坐飞机。 <!-- supersedes: travel-mode --> <!-- trigger: 高铁 -->",
    )
    user.write_text(text, encoding="utf-8")
    append_memory(fts_engine.workspace, ["- 高铁站停车很贵。 <!-- trigger: 高铁 --> <!-- project: bad<key> -->"])
    fts_engine.sync()
    p = fts_engine.context.triggers("明天的高铁票买了吗")
    outcome = {(c.path, c.start_line): (c.outcome, c.eligibility) for c in p.candidates}
    assert outcome[("USER.md", 4)] == ("ineligible", "superseded USER.md entry")
    assert outcome[("USER.md", 6)][0] == "injected"
    assert outcome[("MEMORY.md", 13)] == ("ineligible", "invalid project annotation")
    with fts_engine.store.write() as conn:
        conn.execute(
            "UPDATE memory_index_chunk_provenance SET origin_class = 'untrusted' WHERE chunk_id IN "
            "(SELECT id FROM memory_index_chunks WHERE path = 'USER.md')"
        )
    p = fts_engine.context.triggers("明天的高铁票买了吗")
    active = next(c for c in p.candidates if (c.path, c.start_line) == ("USER.md", 6))
    assert (
        active.outcome == "ineligible" and active.eligibility == "origin untrusted: auto-injection needs owner or agent"
    )
    assert p.block is None and not p.has_strong_hit


def test_only_the_top_three_strong_hits_are_injected(fts_engine: MemoryEngine) -> None:
    append_memory(fts_engine.workspace, [f"- Zoo note number {i}. <!-- trigger: zebra -->" for i in range(5)])
    fts_engine.sync()
    p = fts_engine.context.triggers("zebra")
    zebra = [c for c in p.candidates if "zebra" in c.triggers]
    assert [(c.start_line, c.outcome, c.rank) for c in zebra] == [
        (13, "injected", 1),
        (14, "injected", 2),
        (15, "injected", 3),
        (16, "rank", 4),
        (17, "rank", 5),
    ]


def test_injected_lines_share_1800_chars(fts_engine: MemoryEngine) -> None:
    append_memory(fts_engine.workspace, [f"- Entry {i} " + "word " * 190 + "<!-- trigger: zebra -->" for i in range(3)])
    fts_engine.sync()
    p = fts_engine.context.triggers("zebra")
    first, second, third = (c for c in p.candidates if "zebra" in c.triggers)
    assert (first.outcome, second.outcome, third.outcome) == ("injected", "partial", "budget")
    assert first.injected_chars == u16len(first.line)
    assert second.injected_chars == 1_800 - u16len(first.line) - 1
    assert third.injected_chars == 0
    assert u16len(p.summary) == 1_800 and p.summary == (first.line + "\n" + second.line)[:1_800]


def test_curated_candidate_cap(fts_engine: MemoryEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    fts_engine.sync()
    monkeypatch.setattr(ctxmod, "TRIGGER_CURATED_LIMIT", 1)  # OpenClaw reads ≤ 512, importance first
    p = fts_engine.context.triggers("周末去杭州的车票订好了吗")
    outcome = {c.start_line: (c.outcome, c.eligibility) for c in p.candidates if c.path == "MEMORY.md"}
    assert outcome[6][0] == "injected"  # importance 9 is read first
    assert outcome[4] == ("ineligible", "beyond OpenClaw's 1-row curated candidate cap")


def test_retrieved_copy_carries_its_search_score(fts_engine: MemoryEngine) -> None:
    fts_engine.sync()
    p = fts_engine.context.triggers("杭州周末行预算")
    l4 = next(c for c in p.candidates if (c.path, c.start_line) == ("MEMORY.md", 4))
    assert l4.found_by == "both" and l4.retrieval_score is not None
    assert l4.relevance == pytest.approx(max(0.0, min(1.0, l4.retrieval_score)))
    assert l4.match_score == pytest.approx(0.8 * l4.trigger_score + 0.2 * l4.relevance)


def test_empty_message_is_a_user_error(fts_engine: MemoryEngine) -> None:
    with pytest.raises(ClawmemError, match="the message is empty"):
        fts_engine.context.triggers("   ")
