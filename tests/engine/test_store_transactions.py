"""Write transactions take the write lock when they begin (engine/store/db.py ``immediate``).

In WAL mode a deferred transaction (``with conn:``) that reads, then writes after another
connection committed, fails at once with "database is locked" whatever the busy timeout: the race
of every writer (tests/faults/test_race.py) met it as an MCP server's re-index failing. The same
interleaving through ``immediate`` lets the other writer wait its turn instead.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from clawmem.engine.store.db import immediate, open_connection


def _pair(tmp_path: Path) -> tuple[apsw.Connection, apsw.Connection]:
    a, _ = open_connection(tmp_path / "t.sqlite", load_vec=False)
    a.execute("CREATE TABLE t(x INTEGER)")
    b, _ = open_connection(tmp_path / "t.sqlite", load_vec=False)
    b.setbusytimeout(200)
    return a, b


def test_a_deferred_transaction_fails_when_another_commit_came_between_its_read_and_its_write(
    tmp_path: Path,
) -> None:
    a, b = _pair(tmp_path)
    with pytest.raises(apsw.BusyError), a:  # the behaviour immediate() exists to avoid
        a.execute("SELECT count(*) FROM t").fetchall()
        b.execute("INSERT INTO t VALUES (1)")  # b commits between a's read and a's write
        a.execute("INSERT INTO t VALUES (2)")


def test_an_immediate_transaction_holds_the_lock_so_the_other_writer_waits_instead(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    with immediate(a):
        a.execute("SELECT count(*) FROM t").fetchall()
        with pytest.raises(apsw.BusyError):  # b waits (here: 0.2 s, then gives up); a is not hurt
            b.execute("INSERT INTO t VALUES (1)")
        a.execute("INSERT INTO t VALUES (2)")
    b.execute("INSERT INTO t VALUES (1)")  # its turn
    assert a.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]


def test_immediate_inside_a_transaction_is_a_savepoint_of_it(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    with immediate(a):
        a.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), immediate(a):
            a.execute("INSERT INTO t VALUES (2)")
            raise ValueError("undo only the inner part")
    assert a.execute("SELECT x FROM t").fetchall() == [(1,)]
