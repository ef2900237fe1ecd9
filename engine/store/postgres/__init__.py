"""The shared index on PostgreSQL with pgvector (issue 39), used when ``store.url`` names one.

The embedded SQLite store stays the default and keeps building the index where the files are;
this package shares it: a connection that fails in one line (no server, wrong credentials, no
pgvector), the derived index's tables with a pgvector HNSW index and PostgreSQL full text
(schema.py, index_rows.py), the mirror that publishes this machine's index there in one
transaction and takes the vectors other machines made (mirror.py), the reads of a search over it
(search_reader.py), the pool one open agent uses (shared.py), and an advisory lock per Markdown
file for writers on several machines (locks.py).
"""
