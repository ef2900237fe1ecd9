"""numpy's BLAS on the calling thread only: its worker threads spin on a core after every call.

OpenBLAS (numpy's BLAS) starts a worker per core and, after each matrix product, keeps them
spinning for a while before they sleep: 5 ms of products in a search left the second core busy
for another 48 ms. Beside an indexing pass on the other core, that is the app's thread kept off
both: the app's stalls past 80 ms while a search was answered were half waiting for a core, and
the spinning thread was the busiest one in them (bench/RESULTS.md §3, "numpy's BLAS on one
thread"). The products clawmem does are small (a query against a few thousand vectors, a few
hundred lines against each other), so a second BLAS thread gains nothing measurable.

Applied once, when an engine is made (every front end makes one). ``OPENBLAS_NUM_THREADS`` or
``OMP_NUM_THREADS`` set by the person running clawmem is theirs and is kept.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

_applied = False


def one_blas_thread() -> None:
    """Limit this process's BLAS to one thread, unless the environment already chose a count."""
    global _applied
    if _applied:
        return
    _applied = True
    if any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        return
    threadpool_limits(limits=1, user_api="blas")
