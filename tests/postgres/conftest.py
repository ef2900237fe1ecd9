"""A real PostgreSQL with pgvector for the tests of the PostgreSQL store (issue 39).

``CLAWMEM_TEST_PG_URL`` names a server that already runs with pgvector; otherwise the
``pgserver`` wheel (PostgreSQL 16, pgvector 0.6.2) starts one from a temporary folder, one per
test process, stopped when the process ends. Each test works in a schema of its own, dropped
afterwards, so tests and xdist workers never see each other's tables.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("CLAWMEM_TEST_PG_URL")
    if url:
        yield url
        return
    data: Path = tmp_path_factory.mktemp("pgdata")
    os.environ.setdefault("XDG_RUNTIME_DIR", str(data.parent))  # pgserver's platformdirs asks for it
    import pgserver

    server = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def pg_schema(pg_url: str) -> Iterator[str]:
    """A fresh schema name for one test; dropped with everything in it afterwards."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


@pytest.fixture
def pg_conn(pg_url: str, pg_schema: str) -> Iterator[Any]:
    from clawmem.engine.store.postgres.connect import connect
    from clawmem.engine.store.postgres.schema import ensure_schema

    conn = connect(pg_url)
    ensure_schema(conn, pg_schema)
    yield conn
    conn.close()
