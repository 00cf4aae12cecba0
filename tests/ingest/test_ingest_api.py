from __future__ import annotations

import memoracle.ingest as ingest


def test_the_public_api_is_what_we_mean_to_export() -> None:
    assert sorted(ingest.__all__) == ["FORMATS", "MAX_TEXT_BYTES", "detect_format", "read"]
    assert ingest.MAX_TEXT_BYTES == 1_000_000


def test_every_format_has_a_reader() -> None:
    assert set(ingest._READERS) == set(ingest.FORMATS)
