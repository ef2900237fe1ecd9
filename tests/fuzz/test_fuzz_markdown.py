"""Fuzz the Markdown bytes of memory files (issue "Nothing lost under faults").

Inputs, written into MEMORY.md, USER.md or a diary (memory/YYYY-MM-DD.md): a BOM, NUL bytes, CRLF
and CR-only line ends, invalid UTF-8 and UTF-8-encoded lone surrogates (``b"\\xed\\xa0\\x80"``),
very long lines (explicit examples: a 10 MB line, and a 4.5 MB one under the index's size cap),
deeply nested lists and blockquotes, and the annotations with odd values:
``<!-- observed: … | status: … | by: … -->``,
``<!-- supersedes: … -->``, ``<!-- importance: … -->``, ``<!-- trigger: … -->``,
``<!-- project: … -->`` and Dreaming's lineage and promotion markers.

Property of the reading commands (``index``, ``search``, ``get PATH``, ``status``, ``context``):
they never traceback nor report an internal error (exit 0, or 1 with one line), and none of them
changes a byte of the workspace; indexing never rewrites a user's file. Property of the writers
(``session flush`` into such a diary, ``supersede`` of a bullet in it): either the write works and
keeps every byte that was there (a flush leaves the old bytes as a prefix; a supersede keeps every
old line), or it is refused in one line and changes nothing.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Place, fresh_place, snapshot
from tests.session_fixture import HZ

TARGETS = ("MEMORY.md", "USER.md", "memory/2026-11-04.md", "memory/2026-11-05.md")
OLD_FACT = "- The billing backup runs at 02:30 UTC."

odd_value = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "0",
            "11",
            "-3",
            "7.5",
            "１０",
            "99999999999999999999999",
            "NaN",
            "MEMORY.md#L3",
            "MEMORY.md#L0",
            "MEMORY.md#L99999999999999999999",
            "../../etc/passwd#L1",
            "memory/2026-11-04.md",
            "#L",
            "a|b|c",
            "-->",
            "<!--",
            "2026-02-30",
            "path:",
            "path:/x",
            "github.com/Org/Repo",
            "杭州; 预算",
        ]
    ),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
)


@st.composite
def annotation(draw: st.DrawFn) -> str:
    v = draw(odd_value)
    return draw(
        st.sampled_from(
            [
                f"<!-- observed: 2026-03-02 | status: superseded | by: {v} -->",
                f"<!-- observed: {v} | status: active -->",
                f"<!-- observed: 2026-10-20 | status: {v} -->",
                f"<!-- supersedes: {v} -->",
                f"<!-- importance: {v} -->",
                f"<!-- trigger: {v} -->",
                f"<!-- project: {v} -->",
                f"<!-- project: {v}",
                f"<!-- openclaw-memory-lineage:{v} -->",
                f"<!-- openclaw-memory-promotion:{v} -->",
                f"<!-- {v}",
            ]
        )
    )


text_bit = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
md_line = st.one_of(
    st.builds(lambda t, a: f"- {t} {a}", text_bit, annotation()),
    annotation(),
    st.builds(lambda d, t: "  " * d + f"- {t}", st.integers(0, 60), text_bit),
    st.builds(lambda d, t: "> " * d + t, st.integers(1, 60), text_bit),
    st.builds(lambda d, t: "#" * d + f" {t}", st.integers(1, 8), text_bit),
    st.sampled_from(["", "```", "~~~", "---", "| a | b |", "|---|---|", "[x]: <>", "<div>", "- [ ] todo"]),
    text_bit,
)
raw_bits = st.sampled_from([b"\x00", b"\xff", b"\xed\xa0\x80", b"\xc3", b"\xef\xbb\xbf", b"\r", b"\x1b[31m"])


@st.composite
def markdown_bytes(draw: st.DrawFn, max_raw: int = 2) -> bytes:
    """Lines with odd line ends, sometimes a BOM, sometimes raw bytes that are not UTF-8 text."""
    lines = [s.encode("utf-8") for s in draw(st.lists(md_line, max_size=12))]
    for _ in range(draw(st.integers(-max_raw, max_raw))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(raw_bits))
    sep = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    data = sep.join(lines) + draw(st.sampled_from([b"", sep]))
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


def reading_commands(place: Place, target: str) -> None:
    """Every reading command once; none may change a byte of the workspace."""
    before = snapshot(place.workspace)
    for argv in (
        ("index",),
        ("search", "杭州 预算", "--explain"),
        ("search", "billing backup", "--json"),
        ("get", target),
        ("get", target, "--from", "2", "--lines", "3"),
        ("status", "--deep", "--json"),
        ("context", "--json"),
        ("context", "triggers", "杭州的预算"),
    ):
        place.run(*argv)
        assert snapshot(place.workspace) == before, f"{argv} changed the workspace"


@settings(max_examples=max(10, settings().max_examples * 2 // 3))
@given(target=st.sampled_from(TARGETS), data=markdown_bytes())
@example(target="MEMORY.md", data=b"\xef\xbb\xbf# Memory\r\n- BOM and CRLF <!-- importance: 9 -->\r\n")
@example(target="USER.md", data=b"# User\r<!-- observed: 2026-03-02 | status: superseded | by: USER.md#L0 -->\r- x\r")
@example(target="memory/2026-11-04.md", data=b"- a\x00b\n")
@example(target="memory/2026-11-04.md", data=b"- lone surrogate \xed\xa0\x80 here\n")
@example(target="MEMORY.md", data=b"- bad \xff\xfe byte\n")
@example(target="MEMORY.md", data=("  " * 2000 + "- deep\n" + "> " * 2000 + "quote\n").encode())
@example(target="MEMORY.md", data=b"- x <!-- importance: 99999999999999999999999 --> <!-- trigger: , ; -->\n")
@example(
    target="USER.md",
    data=b"<!-- observed: 2026-02-30 | status: superseded | by: MEMORY.md#L99999999999999999999 -->\n- y\n",
)
@example(target="memory/2026-11-05.md", data=b"- <!-- supersedes:  --> <!-- project: path:\n")
@example(target="MEMORY.md", data=b"- a <!-- openclaw-memory-lineage:--> \n<!-- openclaw-memory-promotion:x -->\n")
@example(target="memory/2026-11-04.md", data=b"")
@example(target="memory/2026-11-04.md", data=b"\xef\xbb\xbf")
@example(target="memory/2026-11-05.md", data=b"- " + b"long " * 2_000_000 + b"\n")  # a 10 MB line
@example(target="memory/2026-11-04.md", data=b"- " + "杭州预算 long ".encode() * 250_000 + b"\n")  # 4.5 MB, indexed
def test_reading_commands_never_crash_nor_write(target: str, data: bytes) -> None:
    with fresh_place() as place:
        (place.workspace / target).write_bytes(data)
        reading_commands(place, target)
        assert (place.workspace / target).read_bytes() == data


def _lines(data: bytes) -> Counter[str]:
    return Counter(data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n").split("\n"))


@settings(max_examples=max(10, settings().max_examples // 3))
@given(
    prefix=markdown_bytes(max_raw=1),
    suffix=markdown_bytes(max_raw=1),
    writer=st.sampled_from(["flush", "supersede", "supersede"]),
)
@example(prefix=b"# 2026-11-05\r- old\r", suffix=b"", writer="flush")
@example(prefix=b"\xef\xbb\xbf# 2026-11-05\r\n", suffix=b"- after\r\n", writer="flush")
@example(prefix=b"# 2026-11-05\r- old\r", suffix=b"- after\r", writer="supersede")
@example(prefix=b"\xef\xbb\xbf# 2026-11-05\r\n", suffix=b"- after\r\n", writer="supersede")
@example(prefix=b"- \xff\r", suffix=b"", writer="supersede")
@example(prefix=b"- \x00\n", suffix=b"", writer="flush")
@example(
    prefix=b"<!-- observed: 2026-01-01 | status: active | by: memory/2026-11-05.md#L1 -->\n",
    suffix=b"",
    writer="supersede",
)
def test_writers_keep_every_byte_or_refuse(prefix: bytes, suffix: bytes, writer: str) -> None:
    """``session flush`` and ``supersede`` on a weird diary: all old bytes kept, or nothing written."""
    rel = "memory/2026-11-05.md"
    sep = b"\n" if not prefix or prefix.endswith((b"\n", b"\r")) else b"\r"
    data = prefix + sep + OLD_FACT.encode() + b"\n" + suffix
    with fresh_place() as place:
        path = place.workspace / rel
        path.write_bytes(data)
        assert place.run("session", "import", str(HZ)).code == 0
        before = snapshot(place.workspace)
        if writer == "flush":
            ran = place.run("session", "flush", "sess-hz-01", "--text", "- The backup now runs at 04:00 UTC.")
        else:
            head = (prefix + sep).decode("utf-8", "replace").removeprefix("\ufeff")
            line = head.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
            ran = place.run("supersede", f"{rel}:{line}", "--by", "USER.md:10")
        after = snapshot(place.workspace)
        event(f"{writer} exit {ran.code}")
        if ran.code == 1:
            assert after == before, f"a refused {writer} changed the workspace"
            return
        new = path.read_bytes()
        assert {k: v for k, v in after.items() if k != rel} == {k: v for k, v in before.items() if k != rel}
        if writer == "flush":
            assert new.startswith(data), "a flush did not keep the old bytes as a prefix"
            assert b"04:00 UTC" in new
        else:
            kept = _lines(new)
            lost = [ln for ln, n in _lines(data).items() if kept[ln] < n and "by:" not in ln]
            assert not lost, f"a supersede lost lines {lost!r}"
            assert "status: superseded" in new.decode("utf-8")
        assert place.run("index").code == 0  # a file that is not text is skipped, not fatal
        place.run("get", rel)  # reads back, or refuses a file that is not text (in one line)
