"""Fuzz the paths of ``clawmem get PATH`` and the MCP tool ``memory_get``: Unicode forms (NFC and
NFD names), case variants, ``..`` in every spelling (``../``, ``memory/../../x``, ``%2e%2e/``,
``..\\``, ``....//``), absolute paths, ``~``, ``//``, a trailing ``/``, NUL, very long names,
files that are not Markdown — and, made in the workspace for each example, symlink loops and
symlinks that leave the workspace.

Property: only memory files inside the workspace are ever returned, and the text returned is
exactly the bytes of such a file (nothing of the file planted beside the workspace ever shows).
Anything else is one line and exit 1 (CLI) or an MCP error result with one short message —
never a traceback. No byte of the workspace changes.
"""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clawmem.engine.paths import is_memory_rel_path
from hypothesis import example, given
from hypothesis import strategies as st

from tests.cli.one_line import one_line_error
from tests.fuzz.harness import ServerSession, keyword_workspace, run_cli, snapshot, tool_error_line

SECRET = "OUTSIDE-THE-WORKSPACE-7f3a"  # the text of the files planted outside the workspace
CAFE_NFC = unicodedata.normalize("NFC", "café.md")
CAFE_NFD = unicodedata.normalize("NFD", "cafe\u0301-nfd.md")

# Path pieces: names in the workspace (in both Unicode forms and other cases), traversal in every
# spelling, and what the file system trips on.
PIECES = (
    "memory", "MEMORY.md", "memory.md", "Memory.md", "MEMORY.MD", "USER.md", "DREAMS.md", "2026-11-01.md",
    CAFE_NFC, unicodedata.normalize("NFD", CAFE_NFC), CAFE_NFD, unicodedata.normalize("NFC", CAFE_NFD), "日記.md",
    "link.md", "loop.md", "outdir", "secret.md", "..", ".", "....", "%2e%2e", "%2f", "~", "", " ", "notes.txt",
    "a.md\x00", "\ud800.md", "\udcff.md", "x" * 300 + ".md", "memory\\..\\..", "C:", "dir.md",
)  # fmt: skip
SEPARATORS = ("/", "//", "\\", "/./")
NASTY = (
    "MEMORY.md",
    "memory.md",
    "Memory.md",
    "MEMORY.MD",
    f"memory/{CAFE_NFC}",
    f"memory/{unicodedata.normalize('NFD', CAFE_NFC)}",
    f"memory/{CAFE_NFD}",
    f"memory/{unicodedata.normalize('NFC', CAFE_NFD)}",
    "memory/日記.md",
    "../secret.md",
    "memory/../../secret.md",
    "memory/../MEMORY.md",
    "%2e%2e/secret.md",
    "memory/%2e%2e/%2e%2e/secret.md",
    "..\\secret.md",
    "memory\\..\\..\\secret.md",
    "....//secret.md",
    "memory/....//....//secret.md",
    "/etc/passwd",
    "/etc/hostname.md",
    "~/secret.md",
    "~",
    "//MEMORY.md",
    "MEMORY.md/",
    "memory/",
    "memory//2026-11-01.md",
    "./MEMORY.md",
    "MEMORY.md\x00",
    "memory/\x00../../secret.md",
    "memory/" + "x" * 300 + ".md",
    "memory/" + "a/" * 3000 + "x.md",
    "memory/\ud800.md",
    "memory/\udcff.md",
    "notes.txt",
    "memory/dir.md",
    "memory/link.md",
    "memory/loop.md",
    "memory/outdir/secret.md",
    "memory/inner-link.md",
    "C:\\secret.md",
    " MEMORY.md ",
    "",
    "-",
)
LINKS = ("link.md", "loop.md", "outdir", "inner-link.md", "chain.md")
LINK_TARGETS = ("outside-file", "outside-dir", "self", "inside-file", "dangling", "chain")

paths = st.one_of(
    st.tuples(
        st.sampled_from(("", "/", "~/", "./", "memory/")),
        st.lists(st.sampled_from(PIECES), min_size=1, max_size=5),
        st.sampled_from(SEPARATORS),
        st.sampled_from(("", "/", "\x00", " ")),
    ).map(lambda t: t[0] + t[2].join(t[1]) + t[3]),
    st.lists(st.one_of(st.characters(), st.sampled_from(("/", "..", ".md", "memory/", "\\"))), max_size=20).map(
        "".join
    ),
)
links = st.lists(st.tuples(st.sampled_from(LINKS), st.sampled_from(LINK_TARGETS)), max_size=2, unique_by=lambda t: t[0])


def nasty_examples(f: Callable[..., Any]) -> Callable[..., Any]:
    """Every path of NASTY as an explicit example, with the links that make it interesting."""
    every_link = list(zip(LINKS, ("outside-file", "self", "outside-dir", "inside-file", "chain"), strict=True))
    for p in reversed(NASTY):
        f = example(path=p, link_specs=every_link)(f)
    return f


class Planted:
    """A workspace with tricky names, and files and a directory planted beside it (outside)."""

    def __init__(self, base: Path) -> None:
        self.home, self.workspace = keyword_workspace(base)
        memory = self.workspace / "memory"
        (memory / CAFE_NFC).write_text("- café, composed\n", encoding="utf-8")
        (memory / CAFE_NFD).write_text("- café, decomposed\n", encoding="utf-8")
        (memory / "日記.md").write_text("- 日記\n", encoding="utf-8")
        (memory / "dir.md").mkdir()
        (self.workspace / "notes.txt").write_text("- not markdown\n", encoding="utf-8")
        self.outside = base / "outside"
        self.outside.mkdir()
        for target in (base / "secret.md", self.outside / "secret.md", base / "x.md"):
            target.write_text(f"- {SECRET}\n", encoding="utf-8")
        self.before = snapshot(self.workspace)

    def link(self, name: str, target: str) -> Path:
        """A symlink ``memory/NAME`` pointing out of the workspace, at itself, inside, nowhere."""
        at = self.workspace / "memory" / name
        dest = {
            "outside-file": str(self.outside / "secret.md"),
            "outside-dir": str(self.outside),
            "self": name,
            "inside-file": "2026-11-01.md",
            "dangling": "nowhere.md",
            "chain": "../memory/chain.md" if name != "chain.md" else "link.md",
        }[target]
        os.symlink(dest, at)
        return at

    def check_returned(self, rel: str, text: str, first: int = 1) -> None:
        """``text`` is lines ``first``… of a memory file inside the workspace, byte for byte."""
        assert SECRET not in text
        assert is_memory_rel_path(rel), rel
        file = self.workspace / rel
        assert not file.is_symlink() and file.is_file(), rel
        assert file.resolve().is_relative_to(self.workspace.resolve()), rel
        content = file.read_bytes().decode("utf-8")
        lines = content.split("\n")
        shown = text.split("\n") if text else []
        assert lines[first - 1 : first - 1 + len(shown)] == shown, (rel, text[:200])


@pytest.fixture(scope="module")
def planted() -> Iterator[Planted]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Planted(Path(tmp))


@pytest.fixture(scope="module")
def server(planted: Planted) -> Iterator[ServerSession]:
    session = ServerSession(planted.home, planted.workspace)
    try:
        yield session
    finally:
        session.close()


def with_links(planted: Planted, link_specs: list[tuple[str, str]]) -> list[Path]:
    return [planted.link(name, target) for name, target in link_specs]


def unlink_all(made: list[Path]) -> None:
    for p in made:
        p.unlink()


@given(path=paths, link_specs=links)
@nasty_examples
def test_cli_get_returns_only_workspace_memory_files(
    planted: Planted, path: str, link_specs: list[tuple[str, str]]
) -> None:
    made = with_links(planted, link_specs)
    try:
        run = run_cli(planted.home, planted.workspace, ["get", "--json", "--", path])
    finally:
        unlink_all(made)
    assert SECRET not in run.out + run.err
    if run.code == 0:
        data = json.loads(run.out)
        planted.check_returned(data["path"], data["text"])
    else:
        assert run.code == 1, (run.code, run.err)
        assert "internal error" not in run.err, run.err
        one_line_error(run.err)
    assert snapshot(planted.workspace) == planted.before


@given(path=paths, link_specs=links)
@nasty_examples
def test_mcp_memory_get_returns_only_workspace_memory_files(
    planted: Planted, server: ServerSession, path: str, link_specs: list[tuple[str, str]]
) -> None:
    made = with_links(planted, link_specs)
    try:
        result = server.call("memory_get", {"path": path})
    finally:
        unlink_all(made)
    if result.is_error:
        assert SECRET not in tool_error_line(result)
    else:
        data = dict(result.structured_content)
        assert SECRET not in json.dumps(data, ensure_ascii=False)
        if data["missing"]:
            assert data["text"] == "" and is_memory_rel_path(data["path"])
        else:
            planted.check_returned(data["path"], data["text"], data["from"])
    assert snapshot(planted.workspace) == planted.before
