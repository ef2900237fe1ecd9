"""Sessions: transcript import, the session index, append-only flush, and the trust classes."""
