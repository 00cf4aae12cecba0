"""The rule files' regexes kept compiled between processes (`language.compiled`): the
patterns built from the kept programs are the ones `re.compile` makes, and a damaged,
foreign or missing file only costs the time to compile again."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoracle.capture.injection import book
from memoracle.capture.injection.classify import load_injection_rules
from memoracle.capture.rules import load_rules
from memoracle.language import compiled, prefilter
from memoracle.language.prefilter import required_literals

SAMPLES = [
    (r"(?P<who>\w+) (?:moved|went) to (?P<place>[A-Z]\w+)", 0),
    (r"never (?:push|deploy)\b.*\bfridays?", re.IGNORECASE),
    (r"(?<!\w)(?:завтра|послезавтра)(?!\w)", 0),
    (r"\d{4}-\d{2}-\d{2}", re.ASCII),
]
TEXTS = [
    "Anna moved to Lisbon last month.",
    "Never push to main on Fridays!",
    "Созвонимся завтра утром.",
    "Due 2026-08-17, moved from 2026-08-10.",
]


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    compiled._caches.clear()
    compiled.keep_in(tmp_path)
    yield tmp_path
    compiled.keep_in(None)
    compiled._caches.clear()


def _fresh_process(folder: Path) -> compiled._Cache:
    """What a later process sees: nothing in memory, the file on disk."""
    compiled._caches.clear()
    compiled.keep_in(folder)
    assert compiled._current is not None
    return compiled._current


def _no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again instead of built from the kept program")

    monkeypatch.setattr(compiled.re, "compile", refuse)
    monkeypatch.setattr(prefilter, "_required_literals", refuse)


def test_a_later_process_builds_the_same_patterns_without_compiling(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [compiled.regex(text, flags) for text, flags in SAMPLES]
    gates = [required_literals(p) for p in first]
    compiled.save_all()
    assert list(folder.glob("regex-*.bin"))
    _fresh_process(folder)
    _no_compiler(monkeypatch)
    again = [compiled.regex(text, flags) for text, flags in SAMPLES]
    again_gates = [required_literals(p) for p in again]
    monkeypatch.undo()
    for (text, flags), old, new in zip(SAMPLES, first, again, strict=True):
        assert new == re.compile(text, flags)  # the same program, flags and text
        assert new.groupindex == old.groupindex and new.groups == old.groups
        for sample in TEXTS:
            found, expected = new.search(sample), old.search(sample)
            assert (found and (found.span(), found.groupdict())) == (
                expected and (expected.span(), expected.groupdict())
            )
    assert again_gates == gates


def test_every_rule_files_regex_round_trips(folder: Path) -> None:
    load_rules()  # every language of the capture rules, compiled now
    load_injection_rules()
    compiled.save_all()
    cache = _fresh_process(folder)
    cache.load()
    assert len(cache.programs) > 1000 and len(cache.literals) > 500
    for (text, flags), entry in cache.programs.items():
        assert compiled._build(text, entry) == re.compile(text, flags), text


def test_a_damaged_or_foreign_file_is_ignored_and_written_again(folder: Path) -> None:
    compiled.regex(*SAMPLES[0])
    compiled.save_all()
    (path,) = folder.glob("regex-*.bin")
    digest, _, body = path.read_bytes().partition(b"\n")
    path.write_bytes(digest + b"\n" + body.replace(b"moved", b"mover"))  # digest wrong now
    cache = _fresh_process(folder)
    assert compiled.regex(*SAMPLES[0]) == re.compile(*SAMPLES[0])
    assert cache.changed  # compiled, to be written again
    compiled.save_all()
    assert _fresh_process(folder).programs == {} and compiled._current is not None
    compiled._current.load()
    assert (SAMPLES[0][0], 0) in compiled._current.programs
    monkey = compiled.TAG
    try:
        compiled.TAG = "another-python"
        foreign = _fresh_process(folder)
        foreign.load()
        assert foreign.programs == {}
    finally:
        compiled.TAG = monkey


def test_a_bad_pattern_is_still_refused(folder: Path) -> None:
    with pytest.raises(re.error):
        compiled.regex("(unclosed", 0)


def test_an_unwritable_folder_costs_speed_not_patterns(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    compiled._caches.clear()
    compiled.keep_in(blocker / "cache")
    try:
        assert compiled.regex(*SAMPLES[1]) == re.compile(*SAMPLES[1])
        compiled.save_all()  # says nothing, raises nothing
    finally:
        compiled.keep_in(None)
        compiled._caches.clear()


def test_a_rule_files_toml_is_parsed_once(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = '[language]\ncode = "en"\n\n[[rule]]\nid = "a.b"\npattern = "x\\\\d+"\nweight = 0.25\n'
    first = compiled.parsed(text, tomllib.loads)
    first["language"]["code"] = "changed by its reader"  # each call gets its own copy
    compiled.save_all()
    _fresh_process(folder)

    def refuse(_: str) -> dict[str, object]:
        raise AssertionError("parsed again instead of read from the cache")

    again = compiled.parsed(text, refuse)
    assert again == tomllib.loads(text)
    assert compiled.parsed(text, refuse) == again and compiled.parsed(text, refuse) is not again
    dated = "when = 2026-12-07\n"  # marshal cannot keep a date: parsed each time
    assert compiled.parsed(dated, tomllib.loads) == tomllib.loads(dated)
    with pytest.raises(tomllib.TOMLDecodeError):
        compiled.parsed("not = = toml", tomllib.loads)


def test_the_injection_books_gates_are_kept(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pattern = re.compile(r"\b(?:ignore|disregard) (?:all )?(?:previous|prior) instructions")
    first = book._gates(pattern)
    compiled.save_all()
    _fresh_process(folder)

    def refuse(_: object) -> None:
        raise AssertionError("walked the regex again instead of reading its gates")

    monkeypatch.setattr(book, "_compute_gates", refuse)
    again = book._gates(pattern)
    assert again == first and again is not book._gates(pattern)
    monkeypatch.undo()
    assert again == book._compute_gates(pattern)
