"""Deterministic TUI fixtures: a pre-indexed copy of a fixture workspace at a fixed path.

Snapshots are reproducible because the clock is fixed (CLAWMEM_NOW), the terminal sizes are
fixed, cursor blink, animations, timings and the file watcher are off (config, like posting's
test config), and each test's workspace lives at the same path on every run. Indexing with the
real model happens once per session per fixture; tests get a copy (mtimes preserved). The
vectors are the real model's, replayed from a recording (tests/tui/recorded_embeddings.py says
why: the last digits of llama.cpp's vectors depend on the CPU, the snapshots must not).
"""

from __future__ import annotations

import fcntl
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawmem.engine.config import load_settings
from clawmem.engine.embed import select
from clawmem.engine.facade import MemoryEngine
from clawmem.tui.app import ClawmemApp

from tests.conftest import FIXTURES
from tests.tui.recorded_embeddings import FRESH, RECORD, RecordedProvider, Recording

SNAP_ROOT = Path("/tmp/clawmem-tui-tests")
TEST_CONFIG = """
[tui]
show_timings = false
cursor_blink = false
watch = false
"""


@pytest.fixture(scope="session", autouse=True)
def _one_session_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    """The workspaces live at fixed paths (the snapshots show them), so two test sessions on one
    machine would delete each other's: an edit then lands in the other session's copy and its
    watcher never sees it. A second session waits for the first (an exclusive lock)."""
    SNAP_ROOT.parent.mkdir(parents=True, exist_ok=True)
    with open(SNAP_ROOT.parent / f"{SNAP_ROOT.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
                print(f"\nanother test session is using {SNAP_ROOT}: waiting for it to finish…", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session", autouse=True)
def _recording() -> Iterator[Recording]:
    """Every provider the TUI tests load answers from the recording of the real model."""
    recording = Recording()
    load = select._load
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(select, "_load", lambda *a, **k: RecordedProvider(load(*a, **k), recording))
        yield recording
    if RECORD:
        recording.save(fresh=FRESH)


@pytest.fixture(autouse=True)
def _every_vector_recorded(_recording: Recording) -> Iterator[None]:
    """A test that embedded a text the recording lacks fails: its screen would depend on the CPU."""
    _recording.missing.clear()
    yield
    if _recording.missing:
        pytest.fail(
            f"embedded {len(_recording.missing)} text(s) live that the recording lacks "
            f"(first: {_recording.missing[0]}): run `make record-embeddings`"
        )


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

    def make(fixture: str = "workspace", *, watch: bool | None = None, config: str = "") -> ClawmemApp:
        """``config`` is appended to the test config.toml (e.g. a ``[tui.keymap]`` table)."""
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        shutil.copytree(indexed_templates(fixture), base)
        if config:
            with (base / "home" / "config.toml").open("a", encoding="utf-8") as f:
                f.write("\n" + config)
        engine = MemoryEngine(load_settings(home=base / "home", workspace=base / "workspace"))
        engines.append(engine)
        return ClawmemApp(engine, watch=watch, background_index=False)

    yield make
    for engine in engines:
        engine.close()


@pytest.fixture
def make_unindexed_app(
    request: pytest.FixtureRequest, default_model_path: Path, _recording: Recording
) -> Iterator[Callable[..., ClawmemApp]]:
    """An app on a workspace written from ``files`` (rel → text) and not indexed yet: the app
    indexes and embeds it in the background as it does for a person opening a new workspace,
    with the model running live (these tests need its real pace; they draw no scores)."""
    _recording.live = True
    request.addfinalizer(lambda: setattr(_recording, "live", False))
    apps: list[ClawmemApp] = []
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)

    def make(files: dict[str, str], *, watch: bool = True) -> ClawmemApp:
        base = SNAP_ROOT / name
        shutil.rmtree(base, ignore_errors=True)
        for rel, text in files.items():
            path = base / "workspace" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (base / "home").mkdir(parents=True)
        (base / "home" / "config.toml").write_text(TEST_CONFIG, encoding="utf-8")
        engine = MemoryEngine(load_settings(home=base / "home", workspace=base / "workspace"))
        app = ClawmemApp(engine, watch=watch, background_index=True)
        apps.append(app)
        return app

    yield make
    for app in apps:
        # A thread worker outlives the app: let it stop before its database is closed.
        app.cancel_indexing()
        deadline = time.monotonic() + 60
        while app.indexing and time.monotonic() < deadline:
            time.sleep(0.05)
        app.engine.close()
