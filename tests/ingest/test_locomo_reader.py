from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from pi_builders import FIXTURES

from memoracle.errors import InvalidInput
from memoracle.ingest import detect_format, read
from memoracle.types import IngestWarning, Turn

# The benchmark data sits beside the repository (../shared/bench), read at run time only.
LOCOMO10 = Path(__file__).resolve().parents[3] / "shared" / "bench" / "locomo10.json"


def turns(path: Path, warnings: list[IngestWarning]) -> list[Turn]:
    return [t for t in read(path, on_warning=warnings.append) if isinstance(t, Turn)]


def test_sessions_in_numeric_order_with_speakers_ids_and_dates(
    warnings: list[IngestWarning],
) -> None:
    path = FIXTURES / "locomo_tiny.json"
    assert detect_format(path) == "locomo"
    got = turns(path, warnings)
    assert [(t.session_id, t.turn_id, t.speaker) for t in got] == [
        ("tiny-1:session_1", "D1:1", "Ines"),
        ("tiny-1:session_1", "D1:2", "Tomas"),
        ("tiny-1:session_1", "D1:3", "Ines"),
        ("tiny-1:session_2", "D2:1", "Tomas"),
        ("tiny-1:session_2", "D2:2", "Ines"),
        ("tiny-1:session_10", "D10:1", "Ines"),
        ("tiny-2:session_1", "D1:1", "Bo"),
    ]
    assert {t.role for t in got} == {"speaker"}
    assert got[0].at == datetime(2024, 3, 3, 9, 15)  # wall-clock, no zone
    assert got[3].at == datetime(2024, 3, 12, 19, 40)
    assert got[5].at == datetime(2024, 6, 1, 12, 5)
    assert got[6].at is None
    assert got[0].origin == f"{path}#tiny-1:D1:1"


def test_photo_captions_are_text_and_queries_and_answers_are_never_read(
    warnings: list[IngestWarning],
) -> None:
    got = turns(FIXTURES / "locomo_tiny.json", warnings)
    assert got[1].text == (
        "Great, we did three routes. Look at this view! "
        "[shares photo: a photo of a valley seen from a cliff]"
    )
    assert got[4].text == "[shares photo: a photo of a clay bowl]"
    everything = " ".join(t.text for t in got)
    for trap in ("TRAP", "QA-ANSWER", "QUERY", "OBSERVATION", "SUMMARY", "EVENT"):
        assert trap not in everything


def test_bad_turns_and_dates_warn(warnings: list[IngestWarning]) -> None:
    turns(FIXTURES / "locomo_tiny.json", warnings)
    assert [w.origin.split("#", 1)[1] for w in warnings] == [
        "tiny-1:D10:2",
        "tiny-1:D10:3",
        "tiny-2:session_1",
    ]
    assert "date_time" in warnings[2].message


def test_a_single_sample_document(tmp_path: Path, warnings: list[IngestWarning]) -> None:
    sample = json.loads((FIXTURES / "locomo_tiny.json").read_text())[1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(sample, indent=2))
    assert detect_format(path) == "locomo"
    assert [t.text for t in turns(path, warnings)] == ["Hello Ada."]


def test_a_broken_document_raises_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"sample_id": "x", "conversation": {')
    with pytest.raises(InvalidInput, match="broken.json"):
        list(read(path, on_warning=lambda w: None))
    path.write_text('{"sample_id": "x"}')
    with pytest.raises(InvalidInput, match="not LoCoMo"):
        list(read(path, "locomo", on_warning=lambda w: None))


@pytest.mark.skipif(not LOCOMO10.exists(), reason="benchmark data not present")
def test_the_whole_locomo10_file(warnings: list[IngestWarning]) -> None:
    got = turns(LOCOMO10, warnings)
    assert len(got) == 5882
    assert len({t.session_id for t in got}) == 272
    assert warnings == []
    assert sum("[shares photo:" in t.text for t in got) == 1226
