"""Choose the embedding provider a run uses, following the spec's optional/required rule.

- ``embedding.provider = "none"``: keyword-only by choice.
- ``"auto"`` / ``"local"`` (optional): the bundled multilingual model, prepared on first use;
  any failure falls back to keyword-only and the reason is reported (status, search, TUI).
- an explicit ``embedding.model`` / ``--model PATH.gguf`` (required): a failure is an error,
  never a silent fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clawmem.engine.config import Settings, default_threads
from clawmem.engine.embed.provider import EmbeddingProvider
from clawmem.engine.errors import ModelError


@dataclass(frozen=True)
class ProviderChoice:
    provider: EmbeddingProvider | None
    requested: str  # "auto", "none", "local" or the configured model path
    required: bool
    error: str | None  # why no provider is available (optional mode only)


def select_provider(settings: Settings, progress: Callable[[str], None] | None = None) -> ProviderChoice:
    emb = settings.embedding
    threads = emb.threads or default_threads()
    if emb.model:
        path = Path(emb.model).expanduser()
        if not path.is_absolute():
            path = (Path.cwd() / path).resolve()
        if not path.is_file():
            raise ModelError(f"embedding model not found: {path}")
        provider = _load(path, threads, emb.prefix_scheme, settings.models_dir, progress)
        return ProviderChoice(provider, str(path), True, None)
    if emb.provider == "none":
        return ProviderChoice(None, "none", False, None)
    try:
        from clawmem.engine.embed.default_model import ensure_default_model

        path = ensure_default_model(settings.models_dir, progress=progress)
        provider = _load(path, threads, emb.prefix_scheme, settings.models_dir, progress)
        return ProviderChoice(provider, emb.provider, False, None)
    except Exception as exc:  # optional mode: keyword-only, with the reason reported
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return ProviderChoice(None, emb.provider, False, f"embedding model unavailable: {reason}")


def _load(
    path: Path,
    threads: int,
    prefix_scheme: str | None,
    models_dir: Path,
    progress: Callable[[str], None] | None,
) -> EmbeddingProvider:
    """The provider, lazy when ``models_dir`` holds the file's card (engine.embed.model_card):
    a run that embeds nothing then never loads the model. ``progress`` hears when it loads."""
    from clawmem.engine.embed.llama_provider import LlamaEmbeddingProvider

    kwargs: dict[str, object] = {"n_threads": threads, "card_dir": models_dir / "cards"}
    if progress is not None:
        kwargs["on_load"] = lambda: progress("loading the embedding model…")
    if prefix_scheme:
        kwargs["prefix_scheme"] = prefix_scheme
    try:
        return LlamaEmbeddingProvider(path, **kwargs)  # type: ignore[arg-type]
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(f"cannot load embedding model {path}: {exc}") from exc
