"""Fuzz the arguments of every tool the MCP server lists (memory_search, memory_get,
memory_append, the intent tools, context_startup, forget_preview, supersede_propose): wrong types,
missing required arguments, extra keys, huge strings, lone surrogates and NUL, negative and huge
integers, null, nested objects — alongside plausible values, so calls also reach the engine.

Property: every call returns a result — a normal one or an error result (isError) with one short
line, never a traceback nor an internal error; the server never dies (after every example the
same server still answers a normal memory_search); and a call that returned an error changed no
byte of the workspace. One in-process server (the SDK's client over ``build_server``) serves a
whole module; writes that succeed are undone after each example.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawmem.mcp_server.tools import TOOL_NAMES
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import ServerSession, keyword_workspace, restore, snapshot, tool_error_line

HUGE = "x" * 100_000
ODD_TEXT = ("\ud800", "\udcff", "\x00", "a\x00b", "", " ", "\n", HUGE, "../../etc/passwd", "MEMORY.md:9", "杭州")
ODD_INTS = (-1, 0, -(2**63), 2**63, 10**30, -(10**30))

# Values that pass validation, so fuzzed calls reach the engine and not only the schema check.
PLAUSIBLE: dict[str, tuple[Any, ...]] = {
    "query": ("hotel", "杭州 预算", "PostgreSQL billing"),
    "maxResults": (1, 6, 200),
    "minScore": (0.0, 0.35, 1.0),
    "corpus": ("memory", "sessions", "all"),
    "project": (["github.com/acme/billing"], []),
    "path": ("MEMORY.md", "memory/2026-11-01.md", "memory/2026-12-31.md"),
    "from": (1, 5, 400),
    "lines": (1, 120),
    "text": ("- The user prefers window seats.", "- 喜欢靠窗的座位"),
    "session": ("no-such-session", ["no-such-session"]),
    "origin": ("agent", "untrusted"),
    "description": ("Remind about the hotel booking",),
    "keywords": (["hotel"], "杭州; hangzhou"),
    "channel": ("telegram",),
    "sender": ("alice",),
    "expires": ("2026-12-01", "2026-11-01"),
    "maxFires": (1, 3),
    "cooldownHours": (0, 24.5),
    "message": ("is the hotel booked?", "杭州的酒店"),
    "id": ("abcdef", "000000"),
    "status": ("armed", "done"),
    "kind": ("private", "group"),
    "older": ("MEMORY.md:9", "MEMORY.md#L12"),
    "newer": ("MEMORY.md:12", "memory/2026-11-04.md:3"),
    "reason": ("the team moved to a new database",),
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(ODD_INTS),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(ODD_TEXT),
)
wild = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6,
)


def _without_gaps(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not ...}


def arguments(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments for a tool, in three shares: plausible ones (the call reaches the engine), plausible
    ones with one argument made wild or left out, and each argument left out, plausible or wild;
    sometimes with extra keys. ``...`` marks an argument left out."""
    props = sorted(schema.get("properties") or {})
    required = set(schema.get("required") or ())
    plausible = {name: st.sampled_from(PLAUSIBLE.get(name, ("x",))) for name in props}
    valid = st.fixed_dictionaries(
        {n: plausible[n] for n in props if n in required},
        optional={n: plausible[n] for n in props if n not in required},
    )
    one_wild = st.tuples(valid, st.sampled_from(props), st.one_of(st.just(...), wild)).map(
        lambda t: _without_gaps({**t[0], t[1]: t[2]})
    )
    any_mix = st.fixed_dictionaries({n: st.one_of(st.just(...), plausible[n], wild) for n in props}).map(_without_gaps)
    extra = st.dictionaries(st.text(min_size=1, max_size=12).filter(lambda k: k not in props), wild, max_size=2)
    return st.tuples(st.one_of(valid, one_wild, any_mix), st.one_of(st.just({}), extra)).map(lambda t: {**t[0], **t[1]})


# Named bad calls every CI run makes on every tool: (what, how to build the arguments).
def named_calls(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    props = sorted(schema.get("properties") or {})
    return {
        "nothing": {},
        "extra key": {**{p: PLAUSIBLE.get(p, ("x",))[0] for p in props}, "bogus": 1},
        "all null": dict.fromkeys(props),
        "lone surrogates": dict.fromkeys(props, "\ud800"),
        "NUL": dict.fromkeys(props, "a\x00b"),
        "huge strings": dict.fromkeys(props, HUGE),
        "negative ints": dict.fromkeys(props, -1),
        "huge ints": dict.fromkeys(props, 10**30),
        "nested objects": {p: {"a": {"b": [1, {"c": None}]}} for p in props},
        "lists of lists": {p: [[], [1, "x"]] for p in props},
        "plausible": {p: PLAUSIBLE.get(p, ("x",))[0] for p in props},
    }


CALL_NAMES = tuple(named_calls({"properties": {"x": {}}}))


class Served:
    """The module's server, its workspace and the workspace's bytes to restore after each example."""

    def __init__(self, base: Path) -> None:
        self.home, self.workspace = keyword_workspace(base)
        self.session = ServerSession(self.home, self.workspace)
        self.before = snapshot(self.workspace)
        self.schemas = {t.name: dict(t.input_schema) for t in self.session.tools()}

    def check_call(self, name: str, args: dict[str, Any]) -> Any:
        """One call: a result or a one-line error that changed nothing; then the server still searches."""
        before = snapshot(self.workspace)
        result = self.session.call(name, args)
        assert result.content, result
        if result.is_error:
            tool_error_line(result)
            assert snapshot(self.workspace) == before, f"{name} failed but changed the workspace"
        else:
            text = "".join(str(getattr(c, "text", "")) for c in result.content)
            assert "Traceback" not in text and "internal error" not in text, text[:300]
        if snapshot(self.workspace) != self.before:
            restore(self.workspace, self.before)
        alive = self.session.call("memory_search", {"query": "hotel budget"})
        assert not alive.is_error and alive.structured_content["results"], alive
        return result


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with tempfile.TemporaryDirectory() as tmp:
        s = Served(Path(tmp))
        try:
            yield s
        finally:
            s.session.close()


def test_the_fuzzed_tools_are_every_tool_listed(served: Served) -> None:
    assert sorted(served.schemas) == sorted(TOOL_NAMES)


@pytest.mark.parametrize("what", CALL_NAMES)
@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_named_bad_arguments_answer_in_one_line(served: Served, tool: str, what: str) -> None:
    served.check_call(tool, named_calls(served.schemas[tool])[what])


@pytest.mark.parametrize("tool", TOOL_NAMES)
@settings(max_examples=max(5, settings().max_examples // 2))
@given(data=st.data())
def test_fuzzed_arguments_never_break_the_server(served: Served, tool: str, data: st.DataObject) -> None:
    args = data.draw(arguments(served.schemas[tool]), label="arguments")
    result = served.check_call(tool, args)
    event("error result" if result.is_error else "normal result")  # --hypothesis-show-statistics
