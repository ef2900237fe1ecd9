"""Hybrid search that explains itself: keyword, path and vector legs, merge, decay, importance,
project factor, MMR and threshold — every hit carries the breakdown of how its score was built."""
