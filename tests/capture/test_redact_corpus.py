"""redact over the generated corpus (tests/redaction_corpus.py): every planted secret
of every shape goes, and at most 1% of the benign sentences full of numbers change."""

from __future__ import annotations

from memoracle.capture.redact import redact
from redaction_corpus import benign, leaks, secrets, shapes


def test_corpus_is_big_and_varied() -> None:
    assert len(shapes()) >= 40
    assert len(secrets()) >= 200
    assert len(benign()) >= 500


def test_no_planted_secret_survives() -> None:
    left = [(p.shape, out) for p in secrets() if leaks(out := redact(p.text).text, p.needles)]
    assert left == []


def test_at_most_one_percent_of_benign_sentences_change() -> None:
    sentences = benign()
    altered = [s for s in sentences if redact(s).text != s]
    assert len(altered) <= len(sentences) // 100, altered


def test_redacting_twice_changes_nothing_more() -> None:
    """Every door redacts what it writes, so text already redacted passes through again."""
    for planted in secrets():
        once = redact(planted.text).text
        assert redact(once).text == once
