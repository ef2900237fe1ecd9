"""Lineage forget: everything one session produced, planned, removed and checked for residue."""
