"""Text cut to a budget with an ellipsis, by characters or by terminal cells (a CJK character takes
two): one rule for every snippet, quote and label any front end shortens."""

from __future__ import annotations

import unicodedata


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: wide and full-width characters 2, combining marks 0."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def clip(text: str, limit: int, *, flat: bool = False) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut; ``flat`` first joins
    its lines and runs of spaces into single spaces."""
    if flat:
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def clip_cells(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` terminal cells, ending in "…" when cut."""
    if cell_width(text) <= width:
        return text
    out, used = "", 0
    for ch in text:
        w = cell_width(ch)
        if used + w > width - 1:
            break
        out, used = out + ch, used + w
    return out + "…"


def clip_flat(text: str, limit: int) -> str:
    """``text`` on one line (its lines and runs of spaces joined by single spaces), cut to
    ``limit`` characters."""
    return clip(text, limit, flat=True)


def clip_cells_flat(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` terminal cells."""
    return clip_cells(" ".join(text.split()), width)
