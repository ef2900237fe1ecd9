"""Every Markdown write holds its folder's lock from the hash check to the rename
(engine/workspace/writes.py): two writers in one process or in two never both pass the check on
the same old bytes, so no appended line is lost and no file created meanwhile is overwritten."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from clawmem.engine.errors import ConflictError
from clawmem.engine.workspace import writes
from clawmem.engine.workspace.writes import append_text, directory_lock, replace_file


def test_threads_appending_to_one_diary_lose_no_line(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "2026-11-05.md"
    path.parent.mkdir()
    errors: list[BaseException] = []

    def appender(name: str) -> None:
        try:
            for i in range(100):
                append_text(path, f"- {name} {i:03d}\n")
        except BaseException as exc:  # a refused write would be a lost line
            errors.append(exc)

    threads = [threading.Thread(target=appender, args=(n,)) for n in ("app", "agent")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 200
    for name in ("app", "agent"):
        assert [ln for ln in lines if ln.startswith(f"- {name} ")] == [f"- {name} {i:03d}" for i in range(100)]


def test_the_lock_is_reentrant_within_a_thread(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    done = threading.Event()

    def write() -> None:
        with directory_lock(tmp_path), directory_lock(tmp_path):  # a flush holds it, its write takes it again
            replace_file(path, b"# Memory\n", expected_sha256=writes.MISSING)
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert done.wait(timeout=10), "deadlocked on its own lock"
    assert path.read_bytes() == b"# Memory\n"


def test_another_thread_waits_for_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    wrote = threading.Event()

    def write() -> None:
        replace_file(path, b"theirs\n", expected_sha256=None)
        wrote.set()

    with directory_lock(tmp_path):
        t = threading.Thread(target=write)
        t.start()
        assert not wrote.wait(timeout=0.5)  # held here: the other writer cannot pass the check
        replace_file(path, b"mine\n", expected_sha256=writes.MISSING)
    t.join(timeout=10)
    assert wrote.is_set() and path.read_bytes() == b"theirs\n"


def test_an_append_never_overwrites_a_file_created_after_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another program (not clawmem, so not under the lock) creates the diary between the
    # append's read (nothing there) and its check: simulated by creating it on the check's read.
    path = tmp_path / "2026-11-05.md"
    real = writes.current_sha256

    def created_meanwhile(p: Path) -> str | None:
        if not p.exists():
            p.write_text("- written by another program\n", encoding="utf-8")
        return real(p)

    monkeypatch.setattr(writes, "current_sha256", created_meanwhile)
    with pytest.raises(ConflictError, match="created on disk meanwhile"):
        append_text(path, "- mine\n")
    assert path.read_text(encoding="utf-8") == "- written by another program\n"


def test_a_write_removes_the_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    # A writer killed between creating its temp file and renaming it (tests/faults/test_kill9.py
    # found these) leaves ".<name>.<random>.clawmem-tmp"; the next write in the folder, holding
    # the lock every writer holds while its temp exists, removes them.
    (tmp_path / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    stale = [tmp_path / ".MEMORY.md.k1ll3d.clawmem-tmp", tmp_path / ".USER.md.0ther.clawmem-tmp"]
    for s in stale:
        s.write_bytes(b"half a write")
    keep = tmp_path / ".hidden-note.md"
    keep.write_text("mine", encoding="utf-8")
    replace_file(tmp_path / "MEMORY.md", b"# Memory\n- new\n", expected_sha256=None)
    assert not any(s.exists() for s in stale)
    assert keep.read_text(encoding="utf-8") == "mine"  # only clawmem's own temp names are touched
    assert (tmp_path / "MEMORY.md").read_bytes() == b"# Memory\n- new\n"
