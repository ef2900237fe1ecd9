"""A unified diff with +/- markers (not only colour), for conflicts and Dreaming proposals."""

from __future__ import annotations

import difflib

from rich.text import Text


def unified_diff(before: str, after: str, *, before_name: str, after_name: str, context: int = 3) -> Text:
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=before_name, tofile=after_name, lineterm="", n=context
    )
    out = Text()
    any_line = False
    for line in lines:
        any_line = True
        if line.startswith(("---", "+++")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = "dim"
        out.append(line + "\n", style=style)
    if not any_line:
        out.append("(no differences)\n", style="dim")
    return out
