"""The one JSON form of what the engine returns, for every ``--json`` output and every MCP result.

Keys are camelCase, as in OpenClaw's own JSON (the forget report of docs/memory-core.md §7:
``agentId``, ``dryRun``, ``sessionIds``) and in MCP tool arguments (``maxResults``): a dataclass's
field names are turned into camelCase here, and the code writes the keys of its own dicts in
camelCase. A dict's keys are never rewritten, because some are data (paths, ids, phase names).
Dates and times are ISO 8601 text, paths text, floats rounded to 6 places.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any


def camel_case(name: str) -> str:
    """``start_line`` → ``startLine``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def json_form(value: Any) -> Any:
    """``value`` as JSON-ready data (dicts, lists, str, int, float, bool, None)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {camel_case(f.name): json_form(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): json_form(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_form(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float):
        return round(value, 6)
    return value
