"""`memoracle bench capture` on a LoCoMo-shaped file: coverage and share of the
observation turns, the base rate and the first-person baseline, counted by hand here."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memoracle.cli import main
from memoracle.jobs.bench.capture_locomo import is_locomo, run_locomo_capture

# Four turns: D1:1 and D1:3 state something an observation cites; D1:2 is small talk;
# D1:4 is a question in the first person (the baseline keeps it, capture does not).
SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I live in Lyon with my sister Noor."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Cool, thanks!"},
            {"speaker": "Ben", "dia_id": "D1:3", "text": "My favourite food is ramen."},
            {"speaker": "Ana", "dia_id": "D1:4", "text": "Should I bring my umbrella?"},
        ],
    },
    "observation": {
        "session_1_observation": {
            "Ana": [["Ana lives in Lyon with her sister Noor.", "D1:1"]],
            "Ben": [["Ben loves ramen.", "D1:3"], ["Ben is polite.", "D1:2"]],
        }
    },
    "qa": [],
}


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "mini.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_a_locomo_file_is_told_from_a_capture_set(tmp_path: Path) -> None:
    assert is_locomo(_write(tmp_path))
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "conversation": "no"}) + "\n", encoding="utf-8")
    assert not is_locomo(jsonl)


def test_coverage_share_base_rate_and_baseline(tmp_path: Path) -> None:
    report = run_locomo_capture(_write(tmp_path))
    split = report.conversations["conv-x"].to_json()
    assert split["turns"] == 4
    assert split["observed"] == 3  # D1:1, D1:2, D1:3
    assert split["base_rate"] == 0.75
    # Capture keeps D1:1 and D1:3, both observed: coverage 2/3, share 1.
    assert split["kept"] == 2
    assert split["coverage"] == 0.667
    assert split["share"] == 1.0
    # The baseline keeps D1:1, D1:3 and D1:4 (first person), not D1:2.
    assert split["base_kept"] == 3
    assert split["baseline_coverage"] == 0.667
    assert split["baseline_share"] == 0.667


def test_the_command_prints_and_json(tmp_path: Path) -> None:
    path = _write(tmp_path)
    out = CliRunner().invoke(main, ["bench", "capture", str(path)])
    assert out.exit_code == 0, out.output
    assert "conv-x" in out.output and "share" in out.output
    out = CliRunner().invoke(main, ["bench", "capture", str(path), "--json"])
    assert out.exit_code == 0, out.output
    groups = json.loads(out.output)["groups"]
    assert groups["all"]["coverage"] == 0.667
