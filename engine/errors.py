"""User-facing errors: each carries one line a person can act on.

The CLI prints ``str(error)`` and exits 1; the TUI shows it in a notification.
Anything that is *not* a ClawmemError is a bug and may surface as a traceback.
"""

from __future__ import annotations


class ClawmemError(Exception):
    """A problem the user can fix (bad input, refused path, missing model …)."""


class ConfigError(ClawmemError):
    """The configuration file or an environment override is invalid."""


class PathRefused(ClawmemError):
    """A path is outside the workspace, not a memory path, or a symlink escape."""


class ModelError(ClawmemError):
    """An embedding model could not be prepared or loaded."""


class IndexBusy(ClawmemError):
    """Another process or thread holds the reindex lock."""


class ConflictError(ClawmemError):
    """A file changed on disk since it was read; nothing was written."""


class DatabaseLocked(ClawmemError):
    """Another connection holds the database's write lock longer than the busy timeout."""

    def __init__(self, path: object) -> None:
        super().__init__(f"database {path} is locked by another clawmem process; try again")
        self.path = path
