"""The derived index on PostgreSQL with pgvector (issue 39): connection, schema and locks.

The embedded SQLite store stays the default. This package is the second backend's ground floor:
a connection that fails in one line (no server, wrong credentials, no pgvector), the derived
index's tables with a pgvector HNSW index and PostgreSQL full text, the index publication in one
transaction, and an advisory lock per Markdown file for writers on several machines.
"""
