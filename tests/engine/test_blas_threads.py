"""numpy's BLAS on one thread once an engine is made (engine/blas_threads.py), unless the person
running clawmem chose a count. Read back from the real OpenBLAS through threadpoolctl."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from clawmem.engine import blas_threads
from clawmem.engine.facade import MemoryEngine
from threadpoolctl import threadpool_info, threadpool_limits


def blas_counts() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every core for BLAS and nothing applied yet; the product's one thread again afterwards."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    threadpool_limits(limits=4, user_api="blas")
    monkeypatch.setattr(blas_threads, "_applied", False)
    yield
    threadpool_limits(limits=1, user_api="blas")


def test_making_an_engine_leaves_blas_one_thread(fresh: None, fts_engine: MemoryEngine) -> None:
    assert np.__name__ and blas_counts()  # numpy's OpenBLAS is there to limit
    threadpool_limits(limits=4, user_api="blas")  # as a process starts (the fixture's engine applied it)
    blas_threads._applied = False
    assert set(blas_counts()) == {4}
    MemoryEngine(fts_engine.settings).close()
    assert set(blas_counts()) == {1}


def test_a_count_the_environment_chose_is_kept(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    before = blas_counts()
    blas_threads.one_blas_thread()
    assert blas_counts() == before and set(before) != {1}
