"""What loading a GGUF file taught us, kept so later runs can name the model without loading it.

Loading multilingual-e5-small costs ~1.5 s and ~470 MB of memory, and a ``clawmem index`` with
nothing new to embed needs only the model's identity (dimensions, pooling, window, file hash)
to check the index against. After the first load of a file its card is written under
``<models dir>/cards/``; a card counts only for the same resolved path, size, modification time
and llama-cpp-python version, so a replaced file or an upgraded llama.cpp loads for real again.
Cards are a cache: a missing, unreadable or unwritable one just means loading the model.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

CARD_VERSION = 1


@dataclass(frozen=True)
class ModelCard:
    path: str  # resolved
    size: int
    mtime_ns: int
    llama_cpp: str
    dims: int
    pooling: str
    general_name: str
    window: int  # content tokens per window
    sha256: str


def _llama_cpp_version() -> str:
    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:  # pragma: no cover - it is a hard dependency
        return "unknown"


def _card_path(card_dir: Path, resolved: Path) -> Path:
    return card_dir / (hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:24] + ".json")


def _file_facts(model_path: Path) -> tuple[Path, int, int] | None:
    """(resolved path, size, mtime_ns) of a model file, or None when it is not a readable file."""
    try:
        resolved = model_path.expanduser().resolve(strict=True)
        stat = resolved.stat()
    except OSError:
        return None
    return (resolved, stat.st_size, stat.st_mtime_ns) if resolved.is_file() else None


def read(card_dir: Path, model_path: Path) -> ModelCard | None:
    """The card of this very file (same path, size, mtime, llama-cpp-python), else None."""
    facts = _file_facts(model_path)
    if facts is None:
        return None
    resolved, size, mtime_ns = facts
    try:
        data = json.loads(_card_path(card_dir, resolved).read_text(encoding="utf-8"))
        if data.pop("version") != CARD_VERSION:
            return None
        card = ModelCard(**data)
    except (OSError, ValueError, TypeError, KeyError):
        return None
    same = (card.path, card.size, card.mtime_ns, card.llama_cpp) == (
        str(resolved),
        size,
        mtime_ns,
        _llama_cpp_version(),
    )
    return card if same else None


def make(
    resolved: Path,
    identity: tuple[int, int],
    *,
    dims: int,
    pooling: str,
    general_name: str,
    window: int,
    sha256: str,
) -> ModelCard:
    """The card of a file just loaded; ``identity`` is its (size, mtime_ns) at load time."""
    size, mtime_ns = identity
    return ModelCard(str(resolved), size, mtime_ns, _llama_cpp_version(), dims, pooling, general_name, window, sha256)


def write(card_dir: Path, card: ModelCard) -> None:
    """Write atomically; a card that cannot be written is simply not kept."""
    target = _card_path(card_dir, Path(card.path))
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        card_dir.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"version": CARD_VERSION, **asdict(card)}, indent=1), encoding="utf-8")
        os.replace(tmp, target)
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)
