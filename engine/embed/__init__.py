"""Embeddings: the provider protocol, the llama.cpp GGUF provider and the default model.

``llama_cpp`` itself is imported only when a model is loaded; ``gguf`` only when the default
model has to be converted.
"""

from clawmem.engine.embed.default_model import (
    DEFAULT_MODEL_FILE,
    DEFAULT_MODEL_NAME,
    EXPECTED_SHA256,
    ensure_default_model,
)
from clawmem.engine.embed.llama_provider import (
    DEFAULT_E5_PREFIX_SCHEME,
    PREFIX_SCHEMES,
    LlamaEmbeddingProvider,
    is_e5_model,
)
from clawmem.engine.embed.provider import EmbeddingProvider, Vector, provider_key

__all__ = [
    "DEFAULT_E5_PREFIX_SCHEME",
    "DEFAULT_MODEL_FILE",
    "DEFAULT_MODEL_NAME",
    "EXPECTED_SHA256",
    "PREFIX_SCHEMES",
    "EmbeddingProvider",
    "LlamaEmbeddingProvider",
    "Vector",
    "ensure_default_model",
    "is_e5_model",
    "provider_key",
]
