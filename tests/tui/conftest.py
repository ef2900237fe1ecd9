"""Deterministic TUI fixtures: a pre-indexed copy of a fixture workspace at a fixed path.

Snapshots are reproducible because the clock is fixed (CLAWMEM_NOW), the terminal sizes are
fixed, cursor blink, animations, timings and the file watcher are off (config, like posting's
test config), and each test's workspace lives at the same path on every run. Indexing with the
real model happens once per session per fixture; tests get a copy (mtimes preserved).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.config import load_settings
from engine.facade import MemoryEngine
from tests.conftest import FIXTURES
from tui.app import ClawmemApp

SNAP_ROOT = Path("/tmp/clawmem-tui-tests")
TEST_CONFIG = """
[tui]
show_timings = false
cursor_blink = false
watch = false
"""


@pytest.fixture(scope="session")
def indexed_templates(default_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    built: dict[str, Path] = {}

    def template(fixture: str) -> Path:
        if fixture not in built:
            base = tmp_path_factory.mktemp(f"template-{fixture}")
            shutil.copytree(FIXTURES / fixture, base / "workspace")
            (base / "home").mkdir()
            (base / "home" / "config.toml").write_text(TEST_CONFIG, encoding="utf-8")
            engine = MemoryEngine(load_settings(home=base / "home", workspace=base / "workspace"))
            engine.sync()
            engine.close()
            built[fixture] = base
        return built[fixture]

    return template


@pytest.fixture
def make_app(
    request: pytest.FixtureRequest, indexed_templates: Callable[[str], Path], worker_id: str = "master"
) -> Iterator[Callable[..., ClawmemApp]]:
    engines: list[MemoryEngine] = []
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)

    def make(fixture: str = "workspace", *, watch: bool | None = None) -> ClawmemApp:
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        shutil.copytree(indexed_templates(fixture), base)
        engine = MemoryEngine(load_settings(home=base / "home", workspace=base / "workspace"))
        engines.append(engine)
        return ClawmemApp(engine, watch=watch, background_index=False)

    yield make
    for engine in engines:
        engine.close()
