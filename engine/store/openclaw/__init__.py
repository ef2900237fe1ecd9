"""OpenClaw's own SQLite databases, read in place and never written: how they are opened
(:mod:`.readonly`), which tables and columns clawmem reads (:mod:`.schema`) and the queries
(:mod:`.rows`). Everything here is read-only; clawmem's own state lives in its own home."""
