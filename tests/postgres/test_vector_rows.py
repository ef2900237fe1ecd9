"""The shared embedding cache and line vectors on a real PostgreSQL (issue 39): a text one
machine embedded is found by another, the LRU keeps what is used, an edited text's unchanged
lines are found by their keys, and the sweep leaves only what chunks still hold."""

from __future__ import annotations

from typing import Any

import numpy as np
from clawmem.engine.store import line_vector_rows
from clawmem.engine.store.postgres import index_rows as pg
from clawmem.engine.store.postgres import vector_rows as vr
from clawmem.engine.store.postgres.connect import connect
from clawmem.engine.store.postgres.schema import use_schema


def test_a_vector_one_machine_cached_is_found_by_another(pg_conn: Any, pg_url: str, pg_schema: str) -> None:
    blob = np.arange(4, dtype="<f4").tobytes()
    vr.cache_store(pg_conn, "llama-cpp", "m", "key", {"h1": blob, "h2": blob}, 4, 1.0)
    other = connect(pg_url)
    try:
        use_schema(other, pg_schema)
        assert vr.cache_lookup(other, "llama-cpp", "m", "key", ["h1", "h3", "h1"], 2.0) == {"h1": blob}
        assert vr.cache_lookup(other, "llama-cpp", "m", "another key", ["h1"], 2.0) == {}  # another model never
    finally:
        other.close()
    assert vr.cache_evict(pg_conn, 1) == 1  # h2 was not used since: it goes
    assert vr.cache_lookup(pg_conn, "llama-cpp", "m", "key", ["h1", "h2"], 3.0) == {"h1": blob}


def test_line_vectors_are_reused_by_key_and_swept(pg_conn: Any) -> None:
    rng = np.random.default_rng(3)
    vectors = [v / np.linalg.norm(v) for v in rng.normal(size=(3, 8)).astype(np.float32)]
    lines = ["- one", "- two", "- three"]
    keys = b"".join(line_vector_rows.line_key(t) for t in lines)
    pg.publish(pg_conn, [], [pg.ChunkRow("c1", "a.md", "memory", 1, 3, "old", "m", "\n".join(lines), 0.0)], {})
    vr.store_lines(pg_conn, "pk", [("old", line_vector_rows.pack(vectors), keys)])
    assert set(vr.lines_for_hashes(pg_conn, ["old", "none"], "pk")) == {"old"}
    assert vr.replaced_lines(pg_conn, "pk", 8, 100) == {}  # a chunk still holds that text
    edited = pg.ChunkRow("c2", "a.md", "memory", 1, 3, "new", "m", "- one\n- 2\n- three", 0.0)
    pg.replace_file(pg_conn, pg.SourceRow("a.md", "memory", "h", 0.0, 1), [edited], {})
    found = vr.replaced_lines(pg_conn, "pk", 8, 100)
    assert set(found) == {line_vector_rows.line_key(t) for t in lines}
    assert np.allclose(found[line_vector_rows.line_key("- three")], vectors[2], atol=1e-3)
    vr.store_lines(pg_conn, "other model", [("new", b"", b"")])
    assert vr.sweep_lines(pg_conn, "pk") == 2  # the replaced text's row, and another provider key's
    assert vr.lines_for_hashes(pg_conn, ["old", "new"], "pk") == {}
