"""Fuzz search queries: FTS5 syntax (quotes, NEAR, ``*``, ``-``, ``^``, column filters,
parentheses, bare AND/OR/NOT), control characters, NUL, lone surrogates, whitespace, queries empty
after normalisation, very long and mixed CJK queries — through ``clawmem search Q --json``,
``--explain`` and the engine's own ``search``.

Property: never a traceback nor an internal error. The CLI prints results (``--json`` parses) and
exits 0, or prints one line ``clawmem: error: …`` and exits 1; the engine returns a response or
raises a ClawmemError. No byte of the workspace changes (a search records recall signals in the
database only).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from clawmem.engine.errors import ClawmemError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.types import ScoringMode, SearchResponse
from hypothesis import example, given
from hypothesis import strategies as st

from tests.cli.one_line import one_line_error
from tests.fuzz.harness import indexed_engine, keyword_workspace, run_cli, snapshot

# Pieces of FTS5 query syntax, words the fixture holds (so some queries match), and text that
# tokenisers and encoders trip on.
FTS_BITS = (
    '"', "'", "NEAR", "NEAR/3", "NEAR(hotel budget, 2)", "*", "hotel*", "*tel", "-", "-hotel", "^", "^hotel",
    ":", "text:hotel", "path:memory", "{text path}:x", "(", ")", "(hotel OR", "AND", "OR", "NOT", "+", "hotel",
    "budget", "PostgreSQL", "billing", "杭州", "湖景房", "返程", "预算", "\x00", "\t", "\r\n", "\x1b[31m",
    "\u3000", "\u200b", "\ufeff", "é", "e\u0301", "\ud800", "\udcff", "%", "_", "\\", "MEMORY.md",
    "memory/2026-11-01.md", ".", "..", "/",
)  # fmt: skip
NASTY = (
    '"',
    '"hotel',
    'hotel"',
    "NEAR",
    "NEAR/3",
    "NEAR(hotel budget)",
    "hotel NEAR/3 budget",
    "*",
    "hotel*",
    "ho*tel",
    "-hotel",
    "-",
    "^hotel",
    "text:hotel",
    "path:memory",
    "(",
    "(hotel",
    "hotel)",
    "()",
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "hotel AND",
    "\x00",
    "hotel\x00budget",
    "\x01\x02\x7f",
    "\ud800",
    "hotel \udcff",
    " ",
    "\t\n\r",
    "\u3000",
    "!!!",
    "???",
    "...",
    "'",
    "x" * 20_000,
    "hotel " * 3_000,
    "杭州" * 2_000,
    "杭州 hotel 预算 budget 湖景房",
    "杭",
    "é e\u0301",
)

queries = st.one_of(
    st.lists(st.sampled_from(FTS_BITS), min_size=1, max_size=8).flatmap(
        lambda bits: st.sampled_from((" ", "", "  ", "\n")).map(lambda sep: sep.join(bits))
    ),
    st.lists(st.one_of(st.characters(), st.sampled_from(FTS_BITS)), min_size=1, max_size=30).map("".join),
    st.tuples(st.sampled_from(("hotel ", "x", "杭州", '"(', "NEAR ")), st.integers(1_000, 5_000)).map(
        lambda t: (t[0] * t[1])[: t[1]]
    ),
)


def nasty_examples(**fixed: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every query of NASTY as an explicit example (CI covers them on every run), with ``fixed``
    for the test's other arguments."""

    def add(f: Callable[..., Any]) -> Callable[..., Any]:
        for q in reversed(NASTY):
            f = example(query=q, **fixed)(f)
        return f

    return add


@pytest.fixture(scope="module")
def indexed() -> Iterator[tuple[Path, Path, MemoryEngine, dict[str, bytes | str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = keyword_workspace(Path(tmp))
        engine = indexed_engine(home, workspace)
        try:
            yield home, workspace, engine, snapshot(workspace)
        finally:
            engine.close()


@given(query=queries)
@nasty_examples()
def test_cli_search_answers_or_refuses_in_one_line(
    indexed: tuple[Path, Path, MemoryEngine, dict[str, bytes | str]], query: str
) -> None:
    home, workspace, _, before = indexed
    for flags in (["--json"], ["--explain"]):
        run = run_cli(home, workspace, ["search", *flags, "--", query])
        assert "internal error" not in run.err and "Traceback" not in run.err + run.out, run.err
        if run.code == 0:
            if flags == ["--json"]:
                data = json.loads(run.out)
                assert isinstance(data["results"], list)
            assert all(ln.startswith("clawmem: warning: ") for ln in run.err.splitlines() if ln.strip()), run.err
        else:
            assert run.code == 1, (run.code, run.err)
            one_line_error(run.err)
    assert snapshot(workspace) == before


@given(query=queries, scoring=st.sampled_from(("calibrated", "openclaw")))
@nasty_examples(scoring="openclaw")  # the CLI test runs them calibrated
def test_engine_search_returns_or_raises_a_user_error(
    indexed: tuple[Path, Path, MemoryEngine, dict[str, bytes | str]], query: str, scoring: ScoringMode
) -> None:
    _, workspace, engine, before = indexed
    try:
        response = engine.search(query, sync=False, scoring=scoring)
    except ClawmemError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
    else:
        assert isinstance(response, SearchResponse)
        json.dumps([h.path for h in response.results])
    assert snapshot(workspace) == before
