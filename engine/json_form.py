"""The one JSON form of what the engine returns: dataclasses as objects, paths and dates as text,
floats rounded to 6 places. Every ``--json`` output and every MCP result goes through it."""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any


def json_form(value: Any) -> Any:
    """``value`` as JSON-ready data (dicts, lists, str, int, float, bool, None)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {k: json_form(v) for k, v in asdict(value).items()}
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
