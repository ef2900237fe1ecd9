"""This machine's place in each shared recall journal it replays (engine/recall_sharing.py).

One row per shared index (``store.url`` and schema): the name this machine appends under and the
id of the last journal row it has replayed. Not derived: ``reset`` keeps it, as it keeps the
recall store the replayed rows went into.
"""

from __future__ import annotations

from clawmem.engine.store.schema import _sql, register_component

RECALL_JOURNAL_V1 = """
CREATE TABLE IF NOT EXISTS recall_journal_cursor (
    index_key TEXT PRIMARY KEY,
    machine TEXT NOT NULL,
    last_id INTEGER NOT NULL DEFAULT 0
) STRICT;
"""

register_component("recall_journal", (_sql(RECALL_JOURNAL_V1),))
