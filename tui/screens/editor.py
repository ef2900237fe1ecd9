"""Editor pane: edit a memory file with Markdown highlighting; saves are atomic and hash-checked.

If the file changed on disk since it was opened, saving opens the conflict dialog instead of
overwriting. External edits to an unmodified buffer are reloaded as they happen; a modified
buffer is never replaced behind the user's back. A saved file is re-indexed in the background.
"""

from __future__ import annotations

from typing import ClassVar

from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.workspace.catalog import FileSnapshot
from clawmem.tui.messages import EngineFailed
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.conflict import ConflictModal
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static, TextArea


class EditorPane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f2", "save", "Save", id="editor.save", tooltip="Save atomically; refuses if the file changed."),
        Binding("f5", "revert", "Reload", id="editor.revert", tooltip="Reload the file from disk."),
    ]
    HELP = "editor"

    def __init__(self) -> None:
        super().__init__(id="editor-pane")
        self.base: FileSnapshot | None = None
        self.changed_on_disk = False

    def compose(self) -> ComposeResult:
        yield Static("No file open — press e in the Memory pane to edit a file.", id="editor-header")
        yield TextArea.code_editor("", language="markdown", id="editor-area", soft_wrap=True)

    @property
    def area(self) -> TextArea:
        return self.query_one("#editor-area", TextArea)

    @property
    def modified(self) -> bool:
        return self.base is not None and self.area.text != self.base.text

    def _header(self) -> None:
        if self.base is None:
            return
        state = Text("saved", style="green")
        if self.modified:
            state = Text("modified", style="bold yellow")
        if self.changed_on_disk:
            state = Text.assemble(state, ("  ·  changed on disk", "bold red"))
        new = "  ·  new file" if not self.base.exists else ""
        self.query_one("#editor-header", Static).update(
            Text.assemble(
                (self.base.rel, "bold"), ("  ·  ", "dim"), state, (new, "dim"), ("  ·  F2 save  F5 reload", "dim")
            )
        )

    # ------------------------------------------------------------------ open / reload

    def open(self, rel: str, line: int | None = None) -> None:
        if self.base is not None and self.modified and rel != self.base.rel:

            def answered(discard: bool | None) -> None:
                if discard:
                    self._load(rel, line)

            self.app.push_screen(
                ConfirmModal(
                    "Unsaved changes",
                    f"Discard your changes to {self.base.rel} and open {rel}?",
                    yes="Discard",
                    no="Keep editing",
                ),
                answered,
            )
            return
        self._load(rel, line)

    @work(thread=True, exclusive=True, group="editor-load", exit_on_error=False)
    def _load(self, rel: str, line: int | None) -> None:
        try:
            snap = self.app.engine.snapshot(rel)  # type: ignore[attr-defined]
        except ClawmemError as exc:
            self.post_message(EngineFailed(str(exc)))
            return
        self.app.call_from_thread(self._show, snap, line)

    def _show(self, snap: FileSnapshot, line: int | None) -> None:
        self.base = snap
        self.changed_on_disk = False
        self.area.load_text(snap.text)
        if line is not None:
            self.area.move_cursor((max(0, line - 1), 0), center=True)
        self.area.focus()
        self._header()

    @on(TextArea.Changed, "#editor-area")
    def _text_changed(self) -> None:
        self._header()

    def files_changed(self, paths: frozenset[str]) -> None:
        if self.base is not None and self.base.rel in paths:
            self._check_disk(self.base)

    @work(thread=True, exclusive=True, group="editor-disk", exit_on_error=False)
    def _check_disk(self, base: FileSnapshot) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        if engine.disk_matches(base):
            return
        try:
            fresh = engine.snapshot(base.rel)
        except ClawmemError:
            return
        self.app.call_from_thread(self._disk_changed, base, fresh)

    def _disk_changed(self, base: FileSnapshot, fresh: FileSnapshot) -> None:
        if self.base is not base:
            return
        if not self.modified:
            cursor = self.area.cursor_location
            self.base = fresh
            self.area.load_text(fresh.text)
            self.area.move_cursor(cursor)
            self.notify(f"{fresh.rel} changed on disk and was reloaded", title="editor")
        else:
            self.changed_on_disk = True
            self.notify(f"{base.rel} changed on disk; saving will ask what to keep", title="editor", severity="warning")
        self._header()

    def action_revert(self) -> None:
        if self.base is None:
            return
        if self.modified:

            def answered(discard: bool | None) -> None:
                if discard and self.base is not None:
                    self._load(self.base.rel, self.area.cursor_location[0] + 1)

            self.app.push_screen(
                ConfirmModal("Reload from disk", "Discard your unsaved changes?", yes="Discard", no="Keep editing"),
                answered,
            )
        else:
            self._load(self.base.rel, self.area.cursor_location[0] + 1)

    # ------------------------------------------------------------------ save

    def action_save(self) -> None:
        if self.base is None:
            return
        self._save(self.base, self.area.text)

    @work(thread=True, exclusive=True, group="editor-save", exit_on_error=False)
    def _save(self, base: FileSnapshot, text: str) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        try:
            engine.save_file(base, text)
            fresh = engine.snapshot(base.rel)
        except ConflictError:
            try:
                disk = engine.snapshot(base.rel)
            except ClawmemError as exc:
                self.post_message(EngineFailed(str(exc)))
                return
            self.app.call_from_thread(self._conflict, base, text, disk)
            return
        except ClawmemError as exc:
            self.post_message(EngineFailed(str(exc)))
            return
        self.app.call_from_thread(self._saved, fresh, text)

    def _saved(self, fresh: FileSnapshot, text: str) -> None:
        self.base = fresh if fresh.text == text else self.base
        self.changed_on_disk = False
        self._header()
        self.notify(f"saved {fresh.rel}", title="editor")
        self.app.start_indexing(only=frozenset({fresh.rel}))  # type: ignore[attr-defined]

    def _conflict(self, base: FileSnapshot, mine: str, disk: FileSnapshot) -> None:
        def resolved(choice: str | None) -> None:
            self._resolve(choice or "cancel", mine, disk)

        self.app.push_screen(ConflictModal(base.rel, mine, disk.text), resolved)

    def _resolve(self, choice: str, mine: str, disk: FileSnapshot) -> None:
        if choice == "cancel":
            self.changed_on_disk = True
            self._header()
            return
        self._resolve_worker(choice, mine, disk)

    @work(thread=True, exclusive=True, group="editor-save", exit_on_error=False)
    def _resolve_worker(self, choice: str, mine: str, disk: FileSnapshot) -> None:
        engine = self.app.engine  # type: ignore[attr-defined]
        try:
            if choice == "mine":
                kept = engine.save_conflict_copy(disk.rel, disk.text, "disk")
                engine.save_file(disk, mine)
                fresh = engine.snapshot(disk.rel)
                self.app.call_from_thread(self._show, fresh, self.area.cursor_location[0] + 1)
                self.app.call_from_thread(
                    self.notify, f"saved your version; the disk version is kept in {kept}", title="editor"
                )
                self.app.call_from_thread(self.app.start_indexing, only=frozenset({disk.rel}))  # type: ignore[attr-defined]
            else:
                kept = engine.save_conflict_copy(disk.rel, mine, "yours")
                self.app.call_from_thread(self._show, disk, self.area.cursor_location[0] + 1)
                self.app.call_from_thread(
                    self.notify, f"took the disk version; your version is kept in {kept}", title="editor"
                )
        except ConflictError:
            try:
                again = engine.snapshot(disk.rel)
            except ClawmemError as exc:
                self.post_message(EngineFailed(str(exc)))
                return
            self.app.call_from_thread(self._conflict, disk, mine, again)
        except ClawmemError as exc:
            self.post_message(EngineFailed(str(exc)))
