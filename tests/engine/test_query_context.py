"""A search's query has a llama.cpp context of its own beside the indexing pass's
(engine/embed/llama_provider.py): it never waits for the pass's decode, and its vectors are the
ones the shared context gave. On the real model."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
from clawmem.engine.embed import LlamaEmbeddingProvider
from clawmem.engine.embed.provider import Vector

QUERIES = ["how does Sam take his coffee", "搬家是哪一天", "the hotel in Lisbon " * 150]  # the last: 3 windows


def test_a_search_does_not_wait_for_the_pass_decode(default_model_path: Path) -> None:
    provider = LlamaEmbeddingProvider(default_model_path, n_threads=1)
    alone = provider.embed_query(QUERIES[0])
    loaded = provider._model()
    got: list[Vector] = []
    with loaded.passages.lock:  # as the pass holds it through each of its decodes
        search = threading.Thread(target=lambda: got.append(provider.embed_query(QUERIES[0])))
        search.start()
        search.join(timeout=60)
        answered = not search.is_alive()
    search.join()
    assert answered, "the query waited for the pass's context"
    assert np.array_equal(got[0], alone)


def test_the_query_context_gives_the_vectors_of_the_pass_context(default_model_path: Path) -> None:
    provider = LlamaEmbeddingProvider(default_model_path, n_threads=1)
    loaded = provider._model()
    assert loaded.queries.ctx != loaded.passages.ctx and loaded.queries.max_sequences == 1
    own = [provider.embed_query(q) for q in QUERIES]
    queries = loaded.queries
    loaded.queries = loaded.passages  # as before: queries decoded in the pass's context
    try:
        shared = [provider.embed_query(q) for q in QUERIES]
    finally:
        loaded.queries = queries
    for a, b in zip(own, shared, strict=True):
        assert float(np.dot(a, b)) > 0.99999
