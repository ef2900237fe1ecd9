"""Deterministic TUI fixtures: every test opens the app on its own copy of a pre-indexed workspace.

Snapshots are reproducible because the clock is fixed (CLAWMEM_NOW), the terminal sizes are
fixed, cursor blink, animations, timings and the file watcher are off (config, like posting's
test config), and every test has its own HOME (``user_home``) holding ``home/`` and
``workspace/``: the app shows paths under HOME as ``~/…``, so a snapshot does not depend on where
pytest (or an xdist worker) puts the test's temporary directory, and no two tests or test
sessions share a path. Indexing with the real model happens once per worker per fixture; tests
get a copy (mtimes preserved). The vectors are the real model's, replayed from a recording
(tests/tui/recorded_embeddings.py says why: the last digits of llama.cpp's vectors depend on the
CPU, the snapshots must not).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from clawmem.engine.config import Settings, load_settings
from clawmem.engine.embed import select
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.openclaw.home import OpenClawHome
from clawmem.tui.app import ClawmemApp

from tests.conftest import FIXTURES
from tests.tui.recorded_embeddings import FRESH, RECORD, RecordedProvider, Recording
from tests.tui.states import build_state, fixed_session_uuids, fixed_uuids, intent_history, recall_history

TEST_CONFIG = """
[tui]
show_timings = false
cursor_blink = false
watch = false
"""


@pytest.fixture(scope="session", autouse=True)
def _recording(worker_id: str) -> Iterator[Recording]:
    """Every provider the TUI tests load answers from the recording of the real model."""
    if RECORD and worker_id != "master":
        pytest.exit("recording embeddings needs one process: run it without -n (make record-embeddings)", 2)
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
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's HOME, which holds its clawmem ``home/`` and its ``workspace/``."""
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    return user


@pytest.fixture
def fresh_settings(user_home: Path, indexed_templates: Callable[[str], Path]) -> Callable[..., Settings]:
    """Settings on a fresh copy of an indexed fixture in this test's HOME (a second call starts over).
    ``config`` is appended to the test config.toml (e.g. a ``[tui.keymap]`` table)."""

    def make(fixture: str = "workspace", *, config: str = "", overrides: dict[str, object] | None = None) -> Settings:
        for part in ("home", "workspace"):
            shutil.rmtree(user_home / part, ignore_errors=True)
        shutil.copytree(indexed_templates(fixture), user_home, dirs_exist_ok=True)
        if config:
            with (user_home / "home" / "config.toml").open("a", encoding="utf-8") as f:
                f.write("\n" + config)
        return load_settings(home=user_home / "home", workspace=user_home / "workspace", overrides=overrides)

    return make


@pytest.fixture
def open_engines() -> Iterator[list[MemoryEngine]]:
    """The engines a test's apps run on, closed when it ends."""
    engines: list[MemoryEngine] = []
    yield engines
    for engine in engines:
        engine.close()


def _app(engines: list[MemoryEngine], settings: Settings, *, watch: bool | None = False) -> ClawmemApp:
    engine = MemoryEngine(settings)
    engines.append(engine)
    return ClawmemApp(engine, watch=watch, background_index=False)


@pytest.fixture
def make_app(fresh_settings: Callable[..., Settings], open_engines: list[MemoryEngine]) -> Callable[..., ClawmemApp]:
    def make(fixture: str = "workspace", *, watch: bool | None = None, config: str = "") -> ClawmemApp:
        return _app(open_engines, fresh_settings(fixture, config=config), watch=watch)

    return make


@pytest.fixture
def session_app(
    fresh_settings: Callable[..., Settings], open_engines: list[MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., ClawmemApp]:
    """Like ``make_app``, with sessions imported (and B's fact promoted) before the app is built
    (``state``: "promoted", "imported" or "empty"; tests/tui/states.py)."""
    fixed_session_uuids(monkeypatch)

    def make(*, state: str = "promoted") -> ClawmemApp:
        settings = fresh_settings()
        if state != "empty":
            build_state(settings, promote=state == "promoted")
        app = _app(open_engines, settings)
        if state == "promoted":
            app.engine.sync()  # embed the new notes' chunks, so the plan's vector rows are real
        return app

    return make


@pytest.fixture
def dream_app(
    fresh_settings: Callable[..., Settings], open_engines: list[MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., ClawmemApp]:
    """Like ``make_app``, with recall signals recorded on earlier days before the app is built;
    keyword arguments override the ``[dreaming]`` settings."""
    fixed_uuids(monkeypatch)

    def make(**dreaming: object) -> ClawmemApp:
        settings = fresh_settings(overrides={"dreaming": dict(dreaming)} if dreaming else None)
        recall_history(settings)
        return _app(open_engines, settings)

    return make


@pytest.fixture
def intents_app(
    fresh_settings: Callable[..., Settings], open_engines: list[MemoryEngine], monkeypatch: pytest.MonkeyPatch
) -> Callable[[], tuple[ClawmemApp, dict[str, str]]]:
    """Like ``make_app``, with intents in every state and jobs with runs made before the app is
    built; returns the app and the intents' ids by name (tests/tui/states.py)."""
    fixed_uuids(monkeypatch)

    def make() -> tuple[ClawmemApp, dict[str, str]]:
        settings = fresh_settings()
        ids = intent_history(settings)
        return _app(open_engines, settings), ids

    return make


@pytest.fixture
def make_unindexed_app(
    user_home: Path, default_model_path: Path, _recording: Recording
) -> Iterator[Callable[..., ClawmemApp]]:
    """An app on a workspace written from ``files`` (rel → text) and not indexed yet: the app
    indexes and embeds it in the background as it does for a person opening a new workspace,
    with the model running live (these tests need its real pace; they draw no scores)."""
    _recording.live = True
    apps: list[ClawmemApp] = []

    def make(files: dict[str, str], *, watch: bool = True) -> ClawmemApp:
        for rel, text in files.items():
            path = user_home / "workspace" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (user_home / "home").mkdir(parents=True)
        (user_home / "home" / "config.toml").write_text(TEST_CONFIG, encoding="utf-8")
        engine = MemoryEngine(load_settings(home=user_home / "home", workspace=user_home / "workspace"))
        app = ClawmemApp(engine, watch=watch, background_index=True)
        apps.append(app)
        return app

    yield make
    _recording.live = False
    for app in apps:
        # A thread worker outlives the app: let it stop before its database is closed.
        app.cancel_indexing()
        deadline = time.monotonic() + 60
        while app.indexing and time.monotonic() < deadline:
            time.sleep(0.05)
        app.engine.close()


@pytest.fixture
def openclaw_app(user_home: Path, open_engines: list[MemoryEngine]) -> Callable[..., ClawmemApp]:
    """The app as ``clawmem --openclaw HOME`` opens it, on a copy of the OpenClaw fixture home
    (tests/fixtures/openclaw-home, made by OpenClaw 2026.9.6) at ``~/openclaw``: the agent's
    workspace, clawmem's own state in ``~/home``. Keyword-only: the recording holds no vectors
    for that workspace's texts, and these screens draw no vector scores."""

    def make(*, sessions_source: bool = False) -> ClawmemApp:
        """``sessions_source``: index the agent's sessions too (``[index] sources``)."""
        shutil.copytree(FIXTURES / "openclaw-home", user_home / "openclaw")
        found = OpenClawHome.open(user_home / "openclaw")
        home = user_home / "home"
        home.mkdir()
        sources = '\n[index]\nsources = ["memory", "sessions"]\n' if sessions_source else ""
        (home / "config.toml").write_text(
            TEST_CONFIG + '\n[embedding]\nprovider = "none"\n' + sources, encoding="utf-8"
        )
        engine = MemoryEngine(load_settings(home=home, workspace=found.workspace), openclaw=found)
        engine.sync()
        open_engines.append(engine)
        return ClawmemApp(engine, watch=False, background_index=False)

    return make
