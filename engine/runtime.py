"""What every engine service stands on, and the two narrow doors between services.

``Runtime`` is the settings, the clock, the store, the workspace and the per-agent locks of one
open agent: a service receives it instead of the whole engine, so it can be built and tested
alone. A service that must bring the index up to date after it wrote a file receives a
:class:`Reindexer`; one that searches receives a :class:`Searcher`. The facade
(:mod:`clawmem.engine.facade`) builds the graph bottom-up; nothing else under ``engine/``
imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from clawmem.engine.config import Clock, Settings
from clawmem.engine.errors import ClawmemError
from clawmem.engine.index.lock import ReindexLock
from clawmem.engine.index.thread_budget import Foreground
from clawmem.engine.store.db import Store
from clawmem.engine.store.postgres.shared import SharedIndex
from clawmem.engine.workspace import writes

if TYPE_CHECKING:
    from clawmem.engine.index.service import SyncReport
    from clawmem.engine.search.types import Legs, ScoringMode, SearchResponse

LockName = Literal["reindex", "embed", "dreaming"]
"""The per-agent lock files: one index writer, one embedding pass, one Dreaming apply/revert."""


@dataclass
class Runtime:
    """One open agent: its settings, clock and store; the workspace and lock paths derive from them.
    ``shared``: the PostgreSQL index ``store.url`` names, which the index publishes to and search
    reads (engine/store/postgres/), or None. ``foreground``: when someone last used this process
    (an indexing pass leaves them a core; engine/index/thread_budget.py)."""

    settings: Settings
    clock: Clock = field(init=False)
    foreground: Foreground = field(init=False, default_factory=Foreground)
    store: Store = field(init=False)
    shared: SharedIndex | None = field(init=False)
    _unshare: Callable[[], None] | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.clock = self.settings.clock()
        self.store = Store(self.settings.db_path)
        url = self.settings.store.url
        self.shared = SharedIndex(url, self.settings.store.schema) if url else None
        self._unshare = writes.share_writes(self.workspace, self.shared.file_lock) if self.shared else None

    @property
    def workspace(self) -> Path:
        return self.settings.workspace

    def lock(self, name: LockName, *, timeout: float | None) -> ReindexLock:
        """A cross-process lock of this agent, ``<agent dir>/<name>.lock`` (``timeout`` as
        :class:`ReindexLock`'s)."""
        return ReindexLock(self.settings.agent_dir / f"{name}.lock", timeout=timeout)

    def require_workspace(self) -> None:
        if not self.workspace.is_dir():
            raise ClawmemError(
                f"workspace {self.workspace} does not exist (set --workspace, CLAWMEM_WORKSPACE or "
                "'workspace' in config.toml, or run `clawmem --demo`)"
            )

    def require_memory_to_read(self) -> None:
        """The workspace, or a shared index to read (store.url): a machine without the files
        still searches the memory others publish."""
        if self.shared is None:
            self.require_workspace()

    def close(self) -> None:
        if self._unshare is not None:
            self._unshare()
        if self.shared is not None:
            self.shared.close()
        self.store.close()


class Reindexer(Protocol):
    """Brings the derived index up to date with files a service has just written."""

    def sync(
        self,
        *,
        only: set[str] | None = None,
        embed: bool = True,
        lock_timeout: float = 30.0,
    ) -> SyncReport: ...


class Searcher(Protocol):
    """Runs a memory search with the engine's rules (the context service's trigger recall)."""

    def search(
        self,
        query: str,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        project_keys: tuple[str, ...] = (),
        scoring: ScoringMode | None = None,
        legs: Legs = "hybrid",
        record: bool = True,
        sync: bool = True,
        include_untrusted: bool = False,
        sources: tuple[str, ...] | None = None,
    ) -> SearchResponse: ...
