"""A real OpenClaw home, read in place and never written.

:mod:`.config` finds the state directory and reads ``openclaw.json`` (JSON5); :mod:`.discovery`
resolves the agent's workspace and databases; :mod:`.databases` reads each database's
``schema_meta`` and refuses shapes clawmem does not know; :mod:`.index_report` compares the
agent's own memory index with the workspace files; :mod:`.sessions` reads its transcripts and
gives each event a trust class (docs/memory-core.md §8); :mod:`.home` is the read-only facade the CLI and the
TUI use. The SQL is in :mod:`engine.store.openclaw`.
"""
