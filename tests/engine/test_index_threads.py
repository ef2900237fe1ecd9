"""An indexing pass's threads follow the machine's load (engine/index/thread_budget.py), and its
model calls are cancellable, deduplicated units (engine/index/model_calls.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from clawmem.engine.config import load_settings
from clawmem.engine.errors import ConfigError
from clawmem.engine.facade import MemoryEngine
from clawmem.engine.index.model_calls import CALL_CHARS, ModelCalls
from clawmem.engine.index.thread_budget import FOREGROUND_S, Foreground, ThreadBudget, machine_sample


class Machine:
    """A stand-in for /proc/stat: the test sets exactly how busy other processes were (a real
    machine's load cannot be dialled to 0.3 of a core). (wall s, machine busy s, own CPU s)."""

    def __init__(self) -> None:
        self.t = self.busy = self.own = 0.0

    def run(self, seconds: float, other: float, own: float) -> None:
        self.t += seconds
        self.busy += (other + own) * seconds
        self.own += own * seconds

    def sample(self) -> tuple[float, float, float]:
        return self.t, self.busy, self.own


def budget(machine: Machine, cores: int = 2) -> ThreadBudget:
    return ThreadBudget(None, 1, cores=cores, sampler=machine.sample, sleep=lambda s: machine.run(s, 0.0, 0.0))


def test_every_core_other_work_leaves_free() -> None:
    machine = Machine()
    b = budget(machine)
    assert b.threads() == 2  # quiet machine (the first call looks at it for a moment)
    machine.run(2.0, other=1.0, own=1.0)  # a build took a core
    assert b.threads() == 1
    machine.run(2.0, other=0.3, own=1.0)  # more than a quarter of a core is still taken
    assert b.threads() == 1
    machine.run(2.0, other=0.1, own=2.0)  # the build ended: background noise only
    assert b.threads() == 2
    four = budget(Machine(), cores=4)
    four._sampler, four._sleep = machine.sample, lambda s: machine.run(s, 1.6, 0.0)
    assert four.threads() == 2  # 1.6 cores taken: two of four


def test_a_fixed_count_and_no_proc_stat() -> None:
    assert ThreadBudget(3, 1, cores=2).threads() == 3  # the user's number, as given
    assert ThreadBudget(None, 1, cores=2, sampler=lambda: None).threads() == 1  # the fallback


def test_someone_using_this_process_gets_a_core_of_the_pass() -> None:
    machine = Machine()
    now = [100.0]
    person = Foreground(clock=lambda: now[0])
    b = ThreadBudget(
        None, 1, cores=2, sampler=machine.sample, sleep=lambda s: machine.run(s, 0.0, 0.0), foreground=person
    )
    assert b.threads() == 2  # nobody has used it yet
    person.touch()  # a key in the app, or a search
    machine.run(1.0, other=0.0, own=2.0)
    assert b.threads() == 1
    now[0] += FOREGROUND_S - 1
    machine.run(1.0, other=0.0, own=1.0)
    assert b.threads() == 1  # still reading what it showed
    now[0] += 2
    machine.run(1.0, other=0.0, own=1.0)
    assert b.threads() == 2  # gone quiet: the core is the pass's again
    person.touch()
    machine.run(1.0, other=1.0, own=1.0)  # and a build beside it as well: never below one
    assert b.threads() == 1
    four = ThreadBudget(None, 1, cores=4, sampler=machine.sample, sleep=lambda s: None, foreground=person)
    assert four.threads() == 3  # one core of four for the person
    assert ThreadBudget(2, 1, cores=2, foreground=person).threads() == 2  # a fixed count stays fixed


def test_a_search_marks_the_process_in_use(fts_engine: MemoryEngine) -> None:
    assert not fts_engine.runtime.foreground.active()
    fts_engine.search("deploy")  # someone (a person, an agent over MCP) waits for this answer
    assert fts_engine.runtime.foreground.active()


def test_a_busy_core_is_seen_for_real() -> None:
    """The real /proc/stat with a real busy process beside this one."""
    if machine_sample() is None:
        pytest.skip("no /proc/stat on this system: the pass uses embedding.threads")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        b = ThreadBudget(None, 1, cores=2)
        b.threads()
        time.sleep(0.5)
        assert b.threads() == 1 and b.other_cores >= 0.5
    finally:
        spinner.kill()
        spinner.wait()


class CountingProvider:
    """Records the calls the pass makes; the vectors are not the subject here (a stand-in so the
    test can count calls and cancel between them exactly)."""

    provider_id, model, dims = "count", "count", 4

    def __init__(self, cancel_after: int | None = None, cancel: threading.Event | None = None) -> None:
        self.calls: list[tuple[list[str], int | None]] = []
        self.cancel_after, self.cancel = cancel_after, cancel

    def cache_key(self) -> dict[str, object]:
        return {}

    def embed_query(self, text: str) -> np.ndarray:
        raise AssertionError("not used")

    def embed_passages(self, texts: Sequence[str], *, threads: int | None = None) -> list[np.ndarray]:
        self.calls.append((list(texts), threads))
        if self.cancel is not None and len(self.calls) == self.cancel_after:
            self.cancel.set()
        return [np.ones(4, dtype=np.float32) for _ in texts]


def test_model_calls_embed_each_text_once_in_decode_sized_calls() -> None:
    provider = CountingProvider()
    calls = ModelCalls(provider, ThreadBudget(2, 1))
    texts = ["short line"] * 3 + [f"line {i} " + "x" * 150 for i in range(40)]
    out = calls.embed(texts)
    assert set(out) == set(texts) and calls.texts == 41  # "short line" once
    sent = [t for group, _ in provider.calls for t in group]
    assert sorted(sent) == sorted(set(texts))
    for group, threads in provider.calls:
        assert threads == 2
        assert len(group) == 1 or sum(map(len, group)) <= CALL_CHARS
    assert len(provider.calls) > 1  # split, so a cancel acts between them


def test_model_calls_stop_at_a_cancel() -> None:
    cancel = threading.Event()
    provider = CountingProvider(cancel_after=1, cancel=cancel)
    calls = ModelCalls(provider, ThreadBudget(1, 1), cancel)
    out = calls.embed(["a" * 1500, "b" * 1500, "c" * 1500])
    assert len(provider.calls) == 1 and len(out) == 1 and calls.cancelled


@pytest.fixture
def no_index_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("CLAWMEM_INDEX_THREADS", raising=False)
    yield


def test_the_index_threads_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_index_env: None) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert load_settings(home=home).embedding.index_threads is None  # auto by default
    (home / "config.toml").write_text('[embedding]\nindex_threads = "auto"\n', "utf-8")
    assert load_settings(home=home).embedding.index_threads is None
    (home / "config.toml").write_text("[embedding]\nindex_threads = 2\n", "utf-8")
    assert load_settings(home=home).embedding.index_threads == 2
    monkeypatch.setenv("CLAWMEM_INDEX_THREADS", "auto")
    assert load_settings(home=home).embedding.index_threads is None  # the environment wins
    for bad, says in (("0", "CLAWMEM_INDEX_THREADS"), ("two", "CLAWMEM_INDEX_THREADS")):
        monkeypatch.setenv("CLAWMEM_INDEX_THREADS", bad)
        with pytest.raises(ConfigError, match=says):
            load_settings(home=home)
    monkeypatch.delenv("CLAWMEM_INDEX_THREADS")
    for bad in ('"many"', "0", "1.5"):
        (home / "config.toml").write_text(f"[embedding]\nindex_threads = {bad}\n", "utf-8")
        with pytest.raises(ConfigError, match="index_threads"):
            load_settings(home=home)
