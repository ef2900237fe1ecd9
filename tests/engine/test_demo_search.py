"""The seed's own example on the demo workspace (issue "Old memories stay findable"): asking
`价格太高` ("the price is too high") finds the note that the lake-view room was over budget in
the top 3. No word of the query is in that note, so it comes by meaning alone and weakly: it is
returned because, when nothing qualifies, the closest memories are (marked as below the threshold)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from clawmem.engine.config import load_settings
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.demo import write_demo

TODAY = date(2026, 11, 5)  # the suite's clock (CLAWMEM_NOW); the demo's diaries are dated from it


def test_price_too_high_finds_the_over_budget_lake_view_room(tmp_path: Path, default_model_path: Path) -> None:
    ws = write_demo(tmp_path / "demo", today=TODAY)
    (tmp_path / "home").mkdir()
    engine = MemoryEngine(load_settings(home=tmp_path / "home", workspace=ws, read_config_file=False))
    try:
        engine.sync()
        r = engine.search("价格太高", record=False, sync=False)
        top3 = [h for h in r.results[:3] if "湖景房" in h.snippet and "超出预算" in h.snippet]
        assert top3, [f"{h.path}:{h.start_line} {h.score:.3f}" for h in r.results]
        hit = top3[0]
        assert hit.path.startswith("memory/") and "vector" in hit.legs
        if r.threshold_rescue:
            assert not hit.breakdown.passed_threshold and (hit.note or "").startswith("returned without passing")
    finally:
        engine.close()
