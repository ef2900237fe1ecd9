"""What every CLI error must be: one line on stderr, ``clawmem: error: …``, never a traceback."""

from __future__ import annotations


def one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("clawmem: error: "), err
    assert "Traceback" not in err
    return lines[0]
