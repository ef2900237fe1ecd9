"""SQLite storage (apsw + sqlite-vec). All SQL of the engine lives in this package."""
