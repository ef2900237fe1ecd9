"""One explanation with the numbers that were used: with ``search.vector_weight`` and
``text_weight`` set, the content score, ``search --explain``, the app's breakdown panel and the
MCP server's "why" sentence all show those weights (they printed 0.7/0.3 whatever the config
said); with nothing set, the defaults."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.search.explain import why_sentence
from clawmem.program.main import main
from clawmem.tui.widgets.breakdown import render_breakdown
from rich.console import Console

from tests.conftest import make_settings

QUERY = "who upgraded the hotel room"


def panel_text(engine: MemoryEngine, query: str) -> tuple[str, float, float, float]:
    """The app's breakdown of the first hybrid hit as plain text, and that hit's parts."""
    r = engine.search(query, record=False)
    hit = next(h for h in r.results if not h.breakdown.path_tier and h.breakdown.vector > 0 and h.breakdown.keyword > 0)
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(render_breakdown(hit, r, engine.settings.search.min_score))
    why = why_sentence(hit, 1, r, threshold=engine.settings.search.min_score, rescue=False)
    b = hit.breakdown
    return console.export_text() + "\n" + why, b.content, b.vector, b.keyword


@pytest.mark.parametrize(("weights", "shown"), [(None, ("0.7", "0.3")), ((0.5, 0.5), ("0.5", "0.5"))])
def test_the_weights_used_are_the_weights_shown(
    capsys: pytest.CaptureFixture[str],
    home: Path,
    workspace: Path,
    default_model_path: Path,
    weights: tuple[float, float] | None,
    shown: tuple[str, str],
) -> None:
    if weights is not None:
        (home / "config.toml").write_text(
            f"[search]\nvector_weight = {weights[0]}\ntext_weight = {weights[1]}\n", encoding="utf-8"
        )
    engine = MemoryEngine(make_settings(home, workspace))
    try:
        engine.sync()
        text, content, vector, keyword = panel_text(engine, QUERY)
    finally:
        engine.close()
    wv, wk = weights or (0.7, 0.3)
    assert content == pytest.approx(wv * vector + wk * keyword, abs=2e-6)  # what the score used …
    assert f"= {shown[0]}·{vector:.2f} + {shown[1]}·{keyword:.2f}" in text  # … the panel shows
    assert f"({shown[0]}·vector {vector:.3f} + {shown[1]}·keyword {keyword:.3f})" in text  # … the MCP sentence
    assert main(["--home", str(home), "--workspace", str(workspace), "search", QUERY, "--explain", "--no-record"]) == 0
    out = capsys.readouterr().out
    assert f"= {shown[0]}·{vector:.2f} + {shown[1]}·{keyword:.2f}" in out  # … and the CLI, the same row
    other = "0.5" if shown[0] == "0.7" else "0.7"
    assert f"= {other}·" not in out and f"= {other}·" not in text
