"""Editor pane: edit a memory file with Markdown highlighting; saves are atomic and hash-checked.

If the file changed on disk since it was opened, saving opens the conflict dialog instead of
overwriting. External edits to an unmodified buffer are reloaded as they happen; a modified
buffer is never replaced behind the user's back. A saved file is re-indexed in the background.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from clawmem.engine.errors import ClawmemError, ConflictError
from clawmem.engine.workspace.catalog import FileSnapshot
from clawmem.tui.modals.confirm import ConfirmModal
from clawmem.tui.modals.conflict import ConflictModal
from clawmem.tui.panes.pane import Pane
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static, TextArea


class EditorPane(Pane):
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

    def _load(self, rel: str, line: int | None) -> None:
        self.run_engine(
            lambda: self.engine.snapshot(rel),
            lambda snap: self._show(snap, line),
            group="editor-load",
            failure=f"{rel} could not be read",
        )

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

    def _check_disk(self, base: FileSnapshot) -> None:
        engine = self.engine

        def fresh() -> FileSnapshot | None:
            if engine.disk_matches(base):
                return None
            try:
                return engine.snapshot(base.rel)
            except ClawmemError:
                return None  # unreadable now: saving reports it

        self.run_engine(
            fresh,
            lambda snap: None if snap is None else self._disk_changed(base, snap),
            group="editor-disk",
            failure=f"{base.rel} could not be checked",
        )

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

    def _save(self, base: FileSnapshot, text: str) -> None:
        engine = self.engine

        def save() -> tuple[bool, FileSnapshot]:
            """(saved, the file now); not saved: it changed on disk, and the snapshot is the disk's."""
            try:
                engine.save_file(base, text)
            except ConflictError:
                return False, engine.snapshot(base.rel)
            return True, engine.snapshot(base.rel)

        def done(outcome: tuple[bool, FileSnapshot]) -> None:
            saved, snap = outcome
            if saved:
                self._saved(snap, text)
            else:
                self._conflict(base, text, snap)

        self.run_engine(save, done, group="editor-save", failure=f"{base.rel} could not be saved")

    def _saved(self, fresh: FileSnapshot, text: str) -> None:
        self.base = fresh if fresh.text == text else self.base
        self.changed_on_disk = False
        self._header()
        self.notify(f"saved {fresh.rel}", title="editor")
        self.clawmem_app.start_indexing(only=frozenset({fresh.rel}))

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

    def _resolve_worker(self, choice: str, mine: str, disk: FileSnapshot) -> None:
        """Keep ``mine`` or the disk's text; the other is saved as a conflict copy first."""
        engine = self.engine

        def resolve() -> tuple[str, FileSnapshot, Path | None]:
            """(what happened, the file to show, the conflict copy)."""
            try:
                if choice == "mine":
                    kept = engine.save_conflict_copy(disk.rel, disk.text, "disk")
                    engine.save_file(disk, mine)
                    return "mine", engine.snapshot(disk.rel), kept
                return "disk", disk, engine.save_conflict_copy(disk.rel, mine, "yours")
            except ConflictError:
                return "conflict", engine.snapshot(disk.rel), None

        def done(outcome: tuple[str, FileSnapshot, Path | None]) -> None:
            what, snap, kept = outcome
            if what == "conflict":
                self._conflict(disk, mine, snap)
                return
            self._show(snap, self.area.cursor_location[0] + 1)
            if what == "mine":
                self.notify(f"saved your version; the disk version is kept in {kept}", title="editor")
                self.clawmem_app.start_indexing(only=frozenset({disk.rel}))
            else:
                self.notify(f"took the disk version; your version is kept in {kept}", title="editor")

        self.run_engine(resolve, done, group="editor-save", failure=f"{disk.rel} could not be saved")
