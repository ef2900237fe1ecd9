"""What every pane stands on: typed access to the app and its engine, and engine calls off the UI thread.

An engine call runs in a thread worker and its result comes back to a callback on the UI thread;
a failure never escapes the worker: it is posted as ``EngineFailed``, which the app turns into a
notification in one place (``ClawmemApp._engine_failed``). Modals use the same two functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, TypeVar, cast

from clawmem.engine.errors import ClawmemError
from clawmem.tui.messages import EngineFailed
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.worker import Worker

if TYPE_CHECKING:
    from clawmem.engine.facade import MemoryEngine
    from clawmem.tui.app import ClawmemApp

T = TypeVar("T")


def clawmem_app(node: DOMNode) -> ClawmemApp:
    """The app ``node`` runs in, typed: every widget of clawmem runs in a ClawmemApp."""
    return cast("ClawmemApp", node.app)


def engine_worker(
    node: DOMNode,
    call: Callable[[], T],
    then: Callable[[T], object],
    *,
    group: str,
    failure: str,
    title: str = "clawmem",
    on_error: Callable[[Exception], object] | None = None,
    notify: bool = True,
) -> Worker[None]:
    """Run ``call`` in a thread worker of ``node``, then ``then(result)`` on the UI thread.

    A newer call in the same ``group`` supersedes an older one. A ClawmemError says what went wrong
    in a sentence of its own, so its text is reported as it is; any other error (a bug) as
    ``"{failure}: {error}"``, so the app never goes down with a worker. Both go to the app as
    ``EngineFailed(text, title)``. ``on_error(error)`` also gets them, on the UI thread, for a pane
    that shows the failure itself; with ``notify=False`` a ClawmemError is then shown only there.
    """

    def report(exc: Exception, text: str, *, notify: bool) -> None:
        if notify:
            node.post_message(EngineFailed(text, title))
        if on_error is not None:
            node.app.call_from_thread(on_error, exc)

    def work() -> None:
        try:
            result = call()
        except ClawmemError as exc:
            report(exc, str(exc), notify=notify)
            return
        except Exception as exc:
            report(exc, f"{failure}: {exc}", notify=True)
            return
        node.app.call_from_thread(then, result)

    return node.run_worker(work, name=group, group=group, exclusive=True, thread=True, exit_on_error=False)


class Pane(Vertical):
    """One tab of the app (a Vertical; a side-by-side pane sets ``layout: horizontal``). The app calls
    ``refresh_from_engine`` on every pane when the index changes, and on a pane when its tab opens;
    ``PALETTE`` lists its command-palette entries."""

    PALETTE: ClassVar[list[tuple[str, str, str]]] = []  # (name, help, action)
    NOTIFY_TITLE: ClassVar[str] = "clawmem"  # the title of this pane's failure notifications

    @property
    def clawmem_app(self) -> ClawmemApp:
        return clawmem_app(self)

    @property
    def engine(self) -> MemoryEngine:
        return self.clawmem_app.engine

    def refresh_from_engine(self, paths: frozenset[str]) -> None:
        """Show the engine's current state (``paths``: the files that changed; empty: any). Default: nothing."""

    def run_engine(
        self,
        call: Callable[[], T],
        then: Callable[[T], object],
        *,
        group: str,
        failure: str,
        on_error: Callable[[Exception], object] | None = None,
        notify: bool = True,
    ) -> Worker[None]:
        """``engine_worker`` for this pane: ``call`` in a thread, ``then(result)`` on the UI thread."""
        title = self.NOTIFY_TITLE
        return engine_worker(
            self, call, then, group=group, failure=failure, title=title, on_error=on_error, notify=notify
        )
