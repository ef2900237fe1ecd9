"""Fuzz ``clawmem session import FILE`` with hostile JSONL (issue "Nothing lost under faults").

Inputs: broken lines, JSON values of the wrong type where strings are expected (numbers, lists,
null, nested objects), lone surrogates escaped in JSON (``"\\ud800"``), out-of-range and odd
timestamps, invalid UTF-8, a BOM, CRLF line ends, an empty file, and a few huge fields (1–10 MB).

Property: the command never tracebacks nor reports an internal error; it exits 0, or 1 with
exactly one line ``clawmem: error: …``. A failed import changes no byte of the workspace and
leaves the database's sessions as they were (all lines or none). A successful import lists every
session of the file (``session list``), and ``session show`` works on each of them.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Place, fresh_place, snapshot
from tests.session_fixture import HZ

BASE: dict[str, Any] = {
    "session_id": "fz-1",
    "session_key": "agent:main:fuzz",
    "kind": "interactive",
    "channel": "cli",
    "sender": "owner",
    "role": "user",
    "text": "Plan the Hangzhou trip",
    "network": False,
    "ts": "2026-11-03T08:00:00Z",
}

odd = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),  # json.dumps writes NaN, which json.loads reads back
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=4)), max_size=2),
)
odd_text = st.sampled_from(["", " ", "a\nb", "tab\there", "\ud800", "x\udfff", "\x00", "é" * 300, "中文"])
per_key: dict[str, st.SearchStrategy[Any]] = {
    "session_id": st.sampled_from(["fz-1", "fz-2", "sess-hz-01"]) | odd_text | odd,
    "session_key": st.sampled_from(["agent:main:fuzz", "agent:main:main"]) | odd_text | odd,
    "kind": st.sampled_from(["interactive", "cron", "heartbeat", "subagent", "INTERACTIVE"]) | odd,
    "channel": st.sampled_from(["cli", "telegram", "webchat"]) | odd_text | odd,
    "sender": odd_text | odd,
    "role": st.sampled_from(["user", "assistant", "tool", "system"]) | odd,
    "text": st.text(max_size=60) | odd_text | odd,
    "network": st.booleans() | odd,
    "ts": st.sampled_from(
        [
            "2026-11-03T08:00:00Z",
            "2026-11-03",
            "2026-11-03T08:00:00+05:30",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "0001-01-01",
            "2026-02-30T00:00:00Z",
            "not a date",
            " ",
        ]
    )
    | odd,
}


@st.composite
def transcript_event(draw: st.DrawFn) -> dict[str, Any]:
    """A transcript event with some keys changed to odd values, dropped, or added."""
    obj = dict(BASE)
    for key in draw(st.lists(st.sampled_from(sorted(per_key)), max_size=3, unique=True)):
        obj[key] = draw(per_key[key])
    for key in draw(st.lists(st.sampled_from(sorted(BASE)), max_size=1)):
        obj.pop(key, None)
    obj.update(draw(st.dictionaries(st.sampled_from(["extra", "meta", "x"]), odd, max_size=1)))
    return obj


line = st.one_of(
    transcript_event().map(lambda o: json.dumps(o).encode()),
    transcript_event().map(lambda o: json.dumps(o, ensure_ascii=False).encode("utf-8", "surrogatepass")),
    transcript_event().map(lambda o: json.dumps(o).encode()[: len(json.dumps(o)) // 2]),  # cut off mid-line
    odd.map(lambda v: json.dumps(v).encode()),  # a number, list, null or string, not an object
    st.text(max_size=30).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"", b"   ", b"\t", b"{", b"}", b"[]", b"{}", b"\xff\xfe", b"\xed\xa0\x80", b"\xc3"]),
)


@st.composite
def jsonl(draw: st.DrawFn) -> bytes:
    """A file of such lines, with a BOM, CRLF or CR line ends sometimes."""
    lines = draw(st.lists(line, max_size=6))
    if draw(st.booleans()):  # mostly well-formed events, so imports succeed too
        lines = [json.dumps(BASE).encode(), *lines]
    sep = draw(st.sampled_from([b"\n", b"\n", b"\r\n", b"\r"]))
    data = sep.join(lines) + draw(st.sampled_from([b"", sep]))
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def seeded(place: Place) -> tuple[dict[str, bytes | None], str]:
    """Import the fixture session first (so "the sessions as they were" is not empty)."""
    assert place.run("session", "import", str(HZ)).code == 0
    return snapshot(place.workspace), place.run("session", "list", "--json").out


def check_import(data: bytes, note: bool) -> None:
    with fresh_place() as place:
        before, sessions = seeded(place)
        jsonl_file = place.home.parent / "in.jsonl"
        jsonl_file.write_bytes(data)
        ran = place.run("session", "import", str(jsonl_file), *(["--note"] if note else []))
        after = snapshot(place.workspace)
        event(f"exit {ran.code}")
        if ran.code == 1:
            assert after == before, "a failed import changed the workspace"
            assert place.run("session", "list", "--json").out == sessions, "a failed import changed the sessions"
            return
        if note:  # notes are new files; every existing byte stays
            assert {k: v for k, v in after.items() if k in before} == before
        else:
            assert after == before
        listed = {s["sessionId"] for s in json.loads(place.run("session", "list", "--json").out)["sessions"]}
        for line_obj in _objects(data):
            sid = line_obj["session_id"].strip()
            assert sid in listed
            shown = place.run("session", "show", operand=sid)
            assert shown.code == 0 and f"Session {sid}" in shown.out
            assert place.run("session", "show", "--json", operand=sid).code == 0


def _objects(data: bytes) -> list[dict[str, Any]]:
    text = data.decode("utf-8").removeprefix("\ufeff")
    return [json.loads(raw) for raw in text.split("\n") if raw.strip()]


@given(data=jsonl(), note=st.booleans())
@example(data=b"", note=False)
@example(data=b"\xef\xbb\xbf", note=False)
@example(data=b"\n\r\n  \n", note=False)
@example(data=json.dumps(BASE).encode() + b"\r\n" + json.dumps(BASE | {"role": "assistant"}).encode(), note=True)
@example(data=b"\xef\xbb\xbf" + json.dumps(BASE).encode() + b"\n", note=True)
@example(data=json.dumps(BASE).encode() + b"\n\xff\n", note=False)
@example(data=json.dumps(BASE).encode().replace(b"Plan", b"\xed\xa0\x80"), note=False)
@example(data=json.dumps(BASE | {"text": "\ud800 lone"}).encode(), note=False)
@example(data=json.dumps(BASE | {"session_id": "\udfff"}).encode(), note=True)
@example(data=json.dumps(BASE | {"text": ["a"]}).encode(), note=False)
@example(data=json.dumps(BASE | {"text": {"nested": {"deep": [1, None]}}}).encode(), note=False)
@example(data=json.dumps(BASE | {"session_id": None}).encode(), note=False)
@example(data=json.dumps(BASE | {"kind": ["interactive"]}).encode(), note=False)
@example(data=json.dumps(BASE | {"ts": "0001-01-01T00:00:00+01:00"}).encode(), note=False)
@example(data=json.dumps(BASE | {"ts": "9999-12-31T23:59:59-01:00"}).encode(), note=False)
@example(data=json.dumps(BASE | {"ts": 1762156800}).encode(), note=False)
@example(data=json.dumps(BASE | {"extra": 2**80}).encode(), note=False)
@example(data=b'[1, 2]\nnull\n42\n"text"\n', note=False)
def test_import_is_all_or_nothing_and_never_crashes(data: bytes, note: bool) -> None:
    check_import(data, note)


@settings(max_examples=max(2, settings().max_examples // 20))
@given(megabytes=st.integers(1, 10), field=st.sampled_from(["text", "sender", "extra"]), char=st.sampled_from("a中\n"))
@example(megabytes=10, field="text", char="a")
def test_huge_fields_import_or_refuse_in_one_line(megabytes: int, field: str, char: str) -> None:
    huge = char * (megabytes * 1024 * 1024 // len(char.encode()))
    check_import(json.dumps(BASE | {field: huge}, ensure_ascii=False).encode(), note=False)
