"""Shared fixtures: a fixed clock, a copy of the bilingual fixture workspace, real engines.

Every engine test runs on real SQLite with sqlite-vec and, where it embeds, the real
multilingual GGUF model (converted once per machine into .cache/models and shared).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from clawmem.engine.config import Settings, load_settings
from clawmem.engine.facade import MemoryEngine

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
NOW = "2026-11-05T09:00:00+00:00"
MODELS_DIR = ROOT / ".cache" / "models"

os.environ.setdefault("CLAWMEM_MODELS_DIR", str(MODELS_DIR))
os.environ["CLAWMEM_NOW"] = NOW
os.environ["CLAWMEM_TZ"] = "UTC"
os.environ.setdefault("CLAWMEM_THREADS", "1")
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
for _var in ("CLAWMEM_HOME", "CLAWMEM_WORKSPACE", "CLAWMEM_MODEL", "CLAWMEM_AGENT"):
    os.environ.pop(_var, None)


def copy_fixture(name: str, dest: Path) -> Path:
    """A writable copy of ``tests/fixtures/<name>`` (tests never touch the originals)."""
    target = dest / name
    shutil.copytree(FIXTURES / name, target, symlinks=True)
    return target


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_fixture("workspace", tmp_path)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def _store_url() -> str | None:
    """Where the engines the tests make keep a shared index: none (SQLite only, the default);
    CLAWMEM_TEST_STORE_URL's PostgreSQL; or, with CLAWMEM_TEST_STORE=postgresql, a server the
    ``pgserver`` wheel starts for this test process (``make test`` runs the search tests so too)."""
    url = os.environ.get("CLAWMEM_TEST_STORE_URL")
    if url or os.environ.get("CLAWMEM_TEST_STORE") != "postgresql":
        return url
    import atexit
    import tempfile

    import pgserver

    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="clawmem-test-run-"))  # pgserver asks for one
    data = Path(tempfile.mkdtemp(prefix="clawmem-test-pg-"))
    server = pgserver.get_server(data, cleanup_mode="delete")
    atexit.register(server.cleanup)
    return str(server.get_uri())


# Set, every engine the tests make (make_settings) publishes to and searches that PostgreSQL, one
# schema per home: the same tests on the other store (README, "Tests").
STORE_URL = _store_url()


def make_settings(home: Path, workspace: Path, **overrides: dict[str, object]) -> Settings:
    if STORE_URL and "store" not in overrides:  # one schema per home: its engines share their index
        schema = "t_" + hashlib.blake2b(str(home.resolve()).encode(), digest_size=6).hexdigest()
        overrides = {**overrides, "store": {"url": STORE_URL, "schema": schema}}
    return load_settings(home=home, workspace=workspace, overrides=overrides or None)


@pytest.fixture
def fts_engine(home: Path, workspace: Path) -> Iterator[MemoryEngine]:
    """A keyword-only engine (no model): for tests about text, files and SQL only."""
    engine = MemoryEngine(make_settings(home, workspace, embedding={"provider": "none"}))
    yield engine
    engine.close()


@pytest.fixture(scope="session")
def default_model_path() -> Path:
    from clawmem.engine.embed.default_model import ensure_default_model

    return ensure_default_model(MODELS_DIR)


@pytest.fixture
def engine(home: Path, workspace: Path, default_model_path: Path) -> Iterator[MemoryEngine]:
    """A real engine with the default multilingual model."""
    e = MemoryEngine(make_settings(home, workspace))
    yield e
    e.close()


@pytest.fixture
def indexed_engine(engine: MemoryEngine) -> MemoryEngine:
    engine.sync()
    return engine
