"""Fuzz ``<home>/config.toml`` (issue "Nothing lost under faults").

Inputs: invalid TOML (cut off, duplicate keys, a BOM, invalid UTF-8, NUL), wrong types for every
known key (strings, booleans, arrays, tables, dates where numbers are expected and the reverse),
unknown keys and sections, out-of-range numbers (negative, zero, NaN, ±inf, 1e400, integers far
beyond 64 bits) and odd strings. The embedding provider is never ``auto`` or ``local``, so no
model loads.

Property: every command (``status``, ``index``, ``search``, ``get``, ``context``) either works or
fails with one line that names config.toml (exit 1); never a traceback nor an internal error; the
workspace never changes. A search that works gives finite scores (a NaN in the config must not
become a NaN score).
"""

from __future__ import annotations

import dataclasses
import json
import math

from clawmem.engine.config import SECTIONS
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.harness import KEYWORD_ONLY, Place, fresh_place, snapshot

KEYS = [(s, f.name) for s, cls in SECTIONS.items() for f in dataclasses.fields(cls)]
NEVER = {("embedding", "provider"), ("embedding", "model")}  # a model would load: out of scope here

literal = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "1",
            "7",
            "200",
            "201",
            "9223372036854775807",
            "-9223372036854775808",
            "99999999999999999999999999",
            "1" + "0" * 400,
            "0.0",
            "-0.0",
            "0.5",
            "-0.7",
            "1.5",
            "1e400",
            "nan",
            "+nan",
            "inf",
            "-inf",
            "true",
            "false",
            '""',
            '" "',
            '"none"',
            '"trigram"',
            '"unicode61"',
            '"calibrated"',
            '"openclaw"',
            '"manual"',
            '"auto"',
            '"Europe/Berlin"',
            '"Not/AZone"',
            '".."',  # the example's temp dir: outside the workspace, yet not all of /tmp
            '"\\u0000"',
            '"杭州"',
            "[]",
            '["memory"]',
            '["sessions", "memory"]',
            '["/etc", "../outside"]',
            "[1, 2]",
            "{}",
            '{ "editor.save" = "ctrl+w" }',
            "{ a = 1 }",
            "1979-05-27T07:32:00Z",
            "1979-05-27",
            "07:32:00",
        ]
    ),
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10).map(json.dumps),
)


@st.composite
def config_toml(draw: st.DrawFn) -> bytes:
    """A keyword-only config with some keys set to odd values, unknown names, or broken TOML."""
    tables: dict[str, list[str]] = {"embedding": ['provider = "none"']}
    for section, key in draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True)):
        if (section, key) not in NEVER:
            tables.setdefault(section, []).append(f"{key} = {draw(literal)}")
    if draw(st.integers(0, 5)) == 0:
        tables.setdefault(draw(st.sampled_from([*SECTIONS, "nonsense"])), []).append(f"unknown_key = {draw(literal)}")
    top: list[str] = []
    if draw(st.integers(0, 5)) == 0:
        top.append(f"{draw(st.sampled_from(['agent_id', 'timezone', 'workspace', 'stray']))} = {draw(literal)}")
    text = "\n".join([*top, *(f"[{name}]\n" + "\n".join(lines) for name, lines in tables.items())]) + "\n"
    data = text.encode("utf-8")
    damage = draw(st.integers(0, 9))
    if damage == 0:  # cut off anywhere
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == 1:
        at = draw(st.integers(0, len(data)))
        data = (
            data[:at] + draw(st.sampled_from([b"\xff", b"\x00", b"\xed\xa0\x80", b"[", b"=", b"\r", b'"'])) + data[at:]
        )
    elif damage == 2:
        data = b"\xef\xbb\xbf" + data
    return data


def check(place: Place) -> None:
    before = snapshot(place.workspace)
    for argv in (
        ("status",),
        ("index",),
        ("search", "billing backup", "--json"),
        ("get", "MEMORY.md"),
        ("context", "--json"),
    ):
        ran = place.run(*argv)
        assert snapshot(place.workspace) == before, f"{argv} changed the workspace"
        if ran.code == 1:
            assert "config.toml" in ran.err, (argv, ran.err)
            if argv == ("status",):  # the settings every command loads are refused: no need to go on
                return
        elif argv[0] == "search":
            response = json.loads(ran.out, parse_constant=_not_a_number)
            for hit in [*response["results"], *response.get("nearMisses", [])]:
                assert math.isfinite(hit["score"]), hit


def _not_a_number(name: str) -> float:
    raise AssertionError(f"search printed {name}, which is not JSON")


@given(config=config_toml())
@example(config=KEYWORD_ONLY.encode())
@example(config=b"\xef\xbb\xbf" + KEYWORD_ONLY.encode())
@example(config=b"[embedding\nprovider = ")
@example(config=b'[embedding]\nprovider = "none"\nprovider = "none"\n')
@example(config=b'[embedding]\nprovider = "none"\n[search]\nvector_weight = nan\ntext_weight = -inf\n')
@example(config=b'[embedding]\nprovider = "none"\n[search]\nvector_weight = -0.7\ntext_weight = 1e400\n')
@example(config=b'[embedding]\nprovider = "none"\n[search]\nhalf_life_days = nan\n')
@example(config=b'[embedding]\nprovider = "none"\n[search]\nhalf_life_days = inf\nmax_decay = 1e400\n')
@example(config=b'[embedding]\nprovider = "none"\n[dreaming]\ndeep_min_score = 1' + b"0" * 400 + b"\n")
@example(config=b'[embedding]\nprovider = "none"\n[search]\ncandidate_multiplier = 99999999999999999999999999\n')
@example(config=b'[embedding]\nprovider = "none"\n[search]\nsnippet_max_chars = -1\ncandidate_multiplier = 0\n')
@example(config=b'[embedding]\nprovider = "none"\n[index]\nmax_file_bytes = -1\nchunk_tokens = 9223372036854775807\n')
@example(config=b'[embedding]\nprovider = "none"\n[bootstrap]\nmax_chars = -5\ntotal_max_chars = 0\n')
@example(config=b'[embedding]\nprovider = "none"\n[index]\nsources = ["/etc", "../outside"]\nextra_paths = ".."\n')
@example(config=b'[embedding]\nprovider = "none"\n[tui]\nkeymap = { "editor.save" = 1 }\n')
@example(config=b'[embedding]\nprovider = "none"\n[nonsense]\nx = 1\n')
@example(config=b'agent_id = "../x"\n[embedding]\nprovider = "none"\n')
@example(config=b'[embedding]\nprovider = "none"\nthreads = 0\n[search]\nmax_results = 1979-05-27\n')
@example(config=b"embedding = 3\n")
@example(config=b'[embedding]\nprovider = "\xff"\n')
def test_any_config_works_or_fails_in_one_line(config: bytes) -> None:
    with fresh_place(config=config) as place:
        check(place)
