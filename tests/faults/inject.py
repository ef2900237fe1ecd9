"""Run the real ``clawmem`` CLI and fail it at its N-th write step (the fault harness's process;
see test_kill9.py and test_disk_full.py).

A write step is every point where a crash can leave something half-done: an ``os.fsync`` (a
temp file's bytes, a directory entry), an ``os.replace`` (an atomic publish) and every SQLite
commit (apsw's commit hook). The process kills itself with SIGKILL just *before* the step runs —
no handler, no cleanup, as a power cut or ``kill -9`` would. With N = 0 nothing is killed and the
number of steps is written to ``$CLAWMEM_FAULT_COUNT`` (how the harness enumerates them).
With ``$CLAWMEM_FAULT=enospc`` the N-th *fsync* raises ENOSPC instead, as a full disk does when
the file system allocates the blocks at flush time (no test can fill a real disk portably here:
the suite runs as root, which ignores permissions, and mounting a small tmpfs needs privileges).

``$CLAWMEM_FAULT_ENTRY`` names a module whose ``main(argv)`` runs instead of the CLI's (the
app's editor save: tests/faults/app_save.py).

A commit on a shared PostgreSQL index (``store.url``) is a write step too; with
``$CLAWMEM_FAULT_STEPS=postgresql`` only those are counted and killed at (a publish's steps:
tests/postgres/test_shared_kill9.py).

Usage: python -m tests.faults.inject N clawmem-args…
"""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys

import apsw

_kill_at = int(sys.argv[1])
_enospc = os.environ.get("CLAWMEM_FAULT") == "enospc"
_only_postgres = os.environ.get("CLAWMEM_FAULT_STEPS") == "postgresql"
_steps = 0
_fsyncs = 0


def _step(postgres: bool = False) -> None:
    global _steps
    if _only_postgres and not postgres:
        return
    _steps += 1
    if _steps == _kill_at and not _enospc:
        os.kill(os.getpid(), signal.SIGKILL)


_replace, _fsync = os.replace, os.fsync


def _counted_replace(src: object, dst: object, *args: object, **kwargs: object) -> None:
    _step()
    _replace(src, dst, *args, **kwargs)  # type: ignore[arg-type]


def _counted_fsync(fd: int) -> None:
    global _fsyncs
    _step()
    _fsyncs += 1
    if _enospc and _fsyncs == _kill_at:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    _fsync(fd)


class _Connection(apsw.Connection):  # type: ignore[misc]
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.set_commit_hook(_on_commit)


def _on_commit() -> bool:
    _step()
    return False  # False: let the commit go on


os.replace = _counted_replace  # type: ignore[assignment]
os.fsync = _counted_fsync
apsw.Connection = _Connection  # type: ignore[misc]

try:
    import psycopg
except ImportError:  # no PostgreSQL driver: no such steps
    pass
else:
    _pg_commit = psycopg.Connection.commit

    def _counted_pg_commit(self: psycopg.Connection) -> None:  # type: ignore[type-arg]
        _step(postgres=True)
        _pg_commit(self)

    psycopg.Connection.commit = _counted_pg_commit  # type: ignore[method-assign]

# after the hooks: the store imports apsw.Connection by name
_entry = importlib.import_module(os.environ.get("CLAWMEM_FAULT_ENTRY") or "clawmem.program.main")
code = _entry.main(sys.argv[2:])
if _kill_at == 0 and os.environ.get("CLAWMEM_FAULT_COUNT"):
    with open(os.environ["CLAWMEM_FAULT_COUNT"], "w", encoding="utf-8") as fh:
        fh.write(str(_fsyncs if _enospc else _steps))
sys.exit(code)
