"""Index identity (docs/memory-core.md §3): what an index was built with. Any difference = "mismatched".

A mismatched index is never silently mixed with new vectors: semantic search pauses (keyword
search keeps working on the old text) and the user is told to run ``clawmem index --force``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

PROVENANCE_VERSION = 1
FTS_ONLY_MODEL = "fts-only"


@dataclass(frozen=True)
class IndexIdentity:
    model: str
    provider: str
    providerKey: str
    sources: tuple[str, ...]
    scopeHash: str
    chunkTokens: int
    chunkOverlap: int
    chunkingVersion: int
    vectorDims: int
    ftsTokenizer: str
    provenanceVersion: int = PROVENANCE_VERSION

    @property
    def semantic(self) -> bool:
        return self.provider != "none" and self.vectorDims > 0

    def to_json(self) -> str:
        data = asdict(self)
        data["sources"] = list(self.sources)
        return json.dumps(data, sort_keys=True, ensure_ascii=False)

    @staticmethod
    def from_json(text: str) -> IndexIdentity | None:
        try:
            data = json.loads(text)
            data["sources"] = tuple(data.get("sources", ()))
            return IndexIdentity(**data)
        except (ValueError, TypeError):
            return None

    def differences(self, other: IndexIdentity) -> list[str]:
        """Human-readable list of fields that differ (for status and warnings)."""
        if self == other:  # every search asks: the usual answer costs no field-by-field walk
            return []
        out = []
        others = asdict(other)
        for key, mine in asdict(self).items():
            theirs = others.get(key)
            if isinstance(mine, tuple):
                mine, theirs = list(mine), list(theirs or ())
            if mine != theirs:
                out.append(f"{key}: {theirs!r} → {mine!r}")
        return out


def scope_hash(extra_paths: tuple[str, ...]) -> str:
    payload = json.dumps({"extraPaths": sorted(extra_paths), "multimodal": False}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def semantic_only_differences(stored: IndexIdentity, expected: IndexIdentity) -> bool:
    """True when stored is semantic and expected is keyword-only and nothing else differs.

    That happens when the model cannot load this time: the sync then keeps the semantic
    index (never overwriting it with an FTS-only one) and leaves new chunks unembedded.
    """
    if not stored.semantic or expected.semantic:
        return False
    strip = {"model", "provider", "providerKey", "vectorDims"}
    a = {k: v for k, v in asdict(stored).items() if k not in strip}
    b = {k: v for k, v in asdict(expected).items() if k not in strip}
    return a == b
