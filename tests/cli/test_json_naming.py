"""One naming convention in every ``--json`` output: camelCase keys (engine/json_form.py says why).

The test walks every key of the JSON the commands print, over a workspace with a session, a flush,
an intent, a job and a Dreaming run, and refuses a key with an underscore unless it is data (a path,
an id) rather than a name the code chose.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clawmem.program.main import main

from tests.session_fixture import LINGYIN

SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")


def keys(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield k, f"{where}.{k}"
            yield from keys(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from keys(v, f"{where}[{i}]")


def test_every_json_output_names_its_keys_in_camel_case(
    home: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "config.toml").write_text('[embedding]\nprovider = "none"\n', encoding="utf-8")
    base = ["--home", str(home), "--workspace", str(workspace)]

    def run(*args: str) -> Any:
        capsys.readouterr()
        code = main([*base, *args])
        out, err = capsys.readouterr()
        assert code == 0, (args, err)
        return json.loads(out) if "--json" in args else None

    run("session", "import", str(LINGYIN), "--note")
    run("session", "flush", "sess-lingyin-02", "--text", "- Lingyin Temple tickets are booked.", "--date", "2026-10-31")
    intent = run("intent", "create", "--description", "remind me of the tickets", "--keywords", "tickets",
                 "--channel", "cli", "--sender", "me", "--json")  # fmt: skip
    outputs = {
        "index": run("index", "--json"),
        "status": run("status", "--json"),
        "search": run("search", "tickets", "--json", "--explain", "--no-record"),
        "get": run("get", "MEMORY.md", "--json"),
        "context": run("context", "--json"),
        "context triggers": run("context", "triggers", "which tickets", "--json"),
        "dream": run("dream", "--json"),
        "dream candidates": run("dream", "candidates", "--json"),
        "dream review": run("dream", "review", "--json"),
        "dream history": run("dream", "history", "--json"),
        "intent create": intent,
        "intent list": run("intent", "list", "--json"),
        "intent show": run("intent", "show", intent["id"], "--json"),
        "intent match": run("intent", "match", "the tickets", "--channel", "cli", "--sender", "me", "--json"),
        "job add": run(
            "job",
            "add",
            "--description",
            "pay",
            "--at",
            "2026-12-24T09:00",
            "--channel",
            "cli",
            "--sender",
            "me",
            "--json",
        ),
        "job list": run("job", "list", "--json"),
        "session list": run("session", "list", "--json"),
        "session show": run("session", "show", "sess-lingyin-02", "--json"),
        "forget": run("forget", "--session", "sess-lingyin-02", "--dry-run", "--json"),
        "supersede": run("supersede", "USER.md:8", "--by", "USER.md:10", "--json"),
        "supersede --undo": run("supersede", "USER.md:8", "--undo", "--json"),
        "supersede --proposals": run("supersede", "--proposals", "--all", "--json"),
    }
    snake = [
        f"{command}: {where}"
        for command, data in outputs.items()
        for key, where in keys(data)
        if SNAKE.match(key) and "/" not in key and "." not in key
    ]
    assert snake == []
    assert outputs["search"]["results"] and "startLine" in outputs["search"]["results"][0]
