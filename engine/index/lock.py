"""The reindex lock: one writer of the derived index at a time, across processes.

``flock`` locks belong to an open file description, so two threads of one process that each
open the lock file exclude each other too (the TUI's watcher sync vs. a forced rebuild).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from clawmem.engine.errors import ClawmemError, IndexBusy


class ReindexLock:
    """``timeout`` is how long :meth:`acquire` waits for the holder (``None``: until it is free)."""

    def __init__(self, path: Path, *, timeout: float | None = 0.0) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None

    def acquire(self, *, cancel: threading.Event | None = None, on_wait: Callable[[], None] | None = None) -> bool:
        """Take the lock; False when the timeout passed or ``cancel`` was set while waiting.

        ``on_wait`` is called once, when the lock is held elsewhere and acquire is going to wait.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:  # a read-only home: the write this lock guards cannot happen either
            raise ClawmemError(
                f"cannot take the lock {self.path}: {exc.strerror or exc}; nothing was changed"
            ) from None
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        waiting = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return True
            except BlockingIOError:
                if (deadline is not None and time.monotonic() >= deadline) or (cancel is not None and cancel.is_set()):
                    os.close(fd)
                    return False
                if not waiting and on_wait is not None:
                    on_wait()
                waiting = True
                if cancel is not None:
                    cancel.wait(0.05)
                else:
                    time.sleep(0.05)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ReindexLock:
        if not self.acquire():
            raise IndexBusy("another clawmem process is indexing this agent; try again when it finishes")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
