"""The rule files load, validate, and fail loudly (file + rule id) when malformed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memoracle.capture.rules import (
    DIRECTIVES,
    FAMILIES,
    RuleFileError,
    available_languages,
    default_rules,
    load_rules,
    parse_language,
)
from memoracle.errors import InvalidInput
from memoracle.language.prefilter import passes, required_literals
from memoracle.language.words import fold_chars
from memoracle.types import KINDS

GOLD = Path(__file__).parent / "data" / "capture_gold.jsonl"
LANGS = ("en", "es", "fr", "ru")

MINIMAL = """
[language]
code = "xx"
name = "Test"

[macros]
me = '''(?:i|we)'''

[[rule]]
id = "preference.like"
kind = "preference"
pattern = '''\\b{{me}}\\s+like\\s+(?P<object>\\w+)'''
"""


def _with_rule(rule: str) -> str:
    return MINIMAL + "\n[[rule]]\n" + rule


def test_packaged_languages_load_eagerly() -> None:
    ruleset = load_rules()  # eager: compiles and validates every file
    assert ruleset.codes == LANGS
    assert available_languages() == LANGS
    for code in LANGS:
        rules = ruleset.get(code)
        assert rules.code == code
        assert rules.source == f"language/rules/capture/{code}.toml"
        assert rules.rules, code


def test_every_family_has_rules_in_every_language() -> None:
    for code in LANGS:
        rules = default_rules().get(code)
        for family in FAMILIES[:9]:  # pattern/insight are left to nightly work
            assert rules.family(family), f"{code} has no {family} rule"


def test_rule_ids_are_qualified_and_unique() -> None:
    for code in LANGS:
        ids = [rule.id for rule in default_rules().get(code).rules]
        assert len(ids) == len(set(ids))
        assert all(rule_id.startswith(f"{code}.") for rule_id in ids)
        assert all(re.fullmatch(r"[a-z]{2}\.[a-z_]+\.[a-z0-9_]+", rule_id) for rule_id in ids)


def test_families_are_memory_kinds_or_directives() -> None:
    for family in FAMILIES:
        assert family in KINDS or family in DIRECTIVES


def test_rules_are_ordered_by_family_priority() -> None:
    for code in LANGS:
        order = [FAMILIES.index(rule.kind) for rule in default_rules().get(code).rules]
        assert order == sorted(order)


def test_unknown_language_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="No capture rules for language 'de'"):
        default_rules().get("de")


def test_default_rules_compile_lazily_and_once() -> None:
    ruleset = default_rules()
    assert ruleset is default_rules()
    assert ruleset.get("fr") is ruleset.get("fr")


def test_minimal_file_parses_with_macro_and_defaults() -> None:
    rules = parse_language(MINIMAL, "xx.toml")
    (rule,) = rules.rules
    assert rule.id == "xx.preference.like"
    assert (rule.importance, rule.confidence) == (0.6, 0.8)  # preference defaults
    match = rule.search("Honestly we like pasta")
    assert match is not None and match.group("object") == "pasta"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('id = "task.x"\nkind = "chore"\npattern = "x"', "rule 'task.x': kind must be one of"),
        ('id = "task.x"\nkind = "task"\npattern = "(unclosed"', "rule 'task.x': bad regex"),
        ('id = "task.x"\nkind = "task"', "rule 'task.x': pattern is required"),
        ('id = "task.x"\nkind = "task"\npattern = "x"\ncolour = 1', "unknown field(s) colour"),
        ('id = "task.x"\nkind = "task"\npattern = "x"\nimportance = 2', "importance must be"),
        ('id = "task.x"\nkind = "task"\npattern = "x"\nflags = ["dotall"]', "unknown flag"),
        ('id = "task.x"\nkind = "task"\npattern = "{{nope}}"', "unknown macro {{nope}}"),
        ('id = "task.x"\nkind = "task"\npattern = "(?P<when>x)"', "unknown named group(s) when"),
        ('id = "forget.x"\nkind = "forget"\npattern = "forget"', "needs a (?P<content>...) group"),
        ('id = "task.x"\nkind = "task"\npattern = "(?P<content>x)"', "only remember/forget"),
        ('id = "task.x"\nkind = "task"\npattern = "x"\npredicate = "Lives In"', "predicate must"),
        ('id = "task.x"\nkind = "task"\npattern = "x"\nperson = "third"', "person must be"),
        ('id = "preference.like"\nkind = "task"\npattern = "x"', "duplicate id"),
        ('id = "nodot"\nkind = "task"\npattern = "x"', "id must look like 'family.name'"),
    ],
)
def test_malformed_rule_names_file_and_rule(rule: str, message: str) -> None:
    with pytest.raises(RuleFileError) as caught:
        parse_language(_with_rule(rule), "rules/xx.toml")
    assert str(caught.value).startswith("rules/xx.toml: ")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[language\ncode = 'xx'", "not valid TOML"),
        ("[[rule]]\nid = 'a.b'", "missing [language] table"),
        ("[language]\ncode = 'English'", "2-3 letter code"),
        ("[language]\ncode = 'xx'\n[detect]\nwordz = []", "[detect]: unknown key(s) wordz"),
        ("[language]\ncode = 'xx'\n[markers]\nquestions = []", "[markers]: unknown key(s)"),
        ("[language]\ncode = 'xx'\n[rules]\nx = 1", "top-level table: unknown key(s) rules"),
        ("[language]\ncode = 'xx'\n[macros]\na = '{{b}}'\nb = '{{a}}'", "nest too deeply"),
        ("[language]\ncode = 'xx'\n[markers]\nhedge = ['(']", "markers.hedge: bad regex"),
    ],
)
def test_malformed_file_names_file(text: str, message: str) -> None:
    with pytest.raises(RuleFileError) as caught:
        parse_language(text, "rules/xx.toml")
    assert str(caught.value).startswith("rules/xx.toml: ")
    assert message in str(caught.value)


def test_rule_file_error_is_invalid_input() -> None:
    assert issubclass(RuleFileError, InvalidInput)


def test_directory_of_rule_files(tmp_path: Path) -> None:
    (tmp_path / "xx.toml").write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored", encoding="utf-8")
    ruleset = load_rules(tmp_path)
    assert ruleset.codes == ("xx",)
    assert ruleset.detection["xx"].name == "Test"


def test_file_name_must_match_language_code(tmp_path: Path) -> None:
    (tmp_path / "yy.toml").write_text(MINIMAL, encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"yy\.toml: \[language\] code is 'xx'"):
        load_rules(tmp_path)


def test_lazy_load_defers_rule_errors_to_first_use(tmp_path: Path) -> None:
    (tmp_path / "xx.toml").write_text(
        _with_rule('id = "task.x"\nkind = "task"\npattern = "("'), encoding="utf-8"
    )
    ruleset = load_rules(tmp_path, eager=False)
    with pytest.raises(RuleFileError, match="rule 'task.x': bad regex"):
        ruleset.get("xx")


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="no <lang>.toml"):
        load_rules(tmp_path)


def test_fold_keeps_length_and_straightens() -> None:
    text = "I’m “fine”\u00a0— ёлка"
    assert len(fold_chars(text)) == len(text)
    assert fold_chars(text) == 'I\'m "fine" — елка'


# --- the prefilter ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\b(?:i|we)\s+love\s+(?P<object>\w+)", ("love",)),
        (r"(?:hate|dislike|can't stand)", ("can't stand", "dislike", "hate")),
        (r"Remind\s+me", ("remind",)),
        (r"\bTODO\b", ("todo",)),
        (r"(?:a|b)c", None),  # shortest literal too short to help
        (r"(?:love)?\s*x", None),  # optional: nothing required
        (r"(?:love|\w+ed)", None),  # one branch has no literal
        (r"(?:lov){2}e", ("lov",)),
    ],
)
def test_required_literals(pattern: str, expected: tuple[str, ...] | None) -> None:
    assert required_literals(re.compile(pattern, re.IGNORECASE)) == expected


def test_passes() -> None:
    assert passes(None, "anything")
    assert passes(("love", "hate"), "i hate mondays")
    assert not passes(("love", "hate"), "mondays")


def _gold_texts() -> list[str]:
    with GOLD.open(encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines]
    return texts + [
        "Remind me: TODO renew the cert",
        "ERROR: FAILED WITH EXIT CODE 2",
        "I'M SO INTO JAZZ",
        "NEVER PUSH TO MAIN",
        "Straße, İstanbul, ǅemal, Ωmega",
    ]


def test_gates_never_hide_a_match() -> None:
    """Every gate is a necessary condition of its regex (checked on real sentences)."""
    texts = [fold_chars(text) for text in _gold_texts()]
    for code in LANGS:
        rules = default_rules().get(code)
        matchers = [rule.patterns for rule in rules.rules]
        matchers += [
            m
            for m in (rules.question, rules.polite, rules.hypothetical, rules.hedge, rules.vague)
            if m is not None
        ]
        for matcher in matchers:
            for pattern, gate in zip(matcher.patterns, matcher.gates, strict=True):
                for text in texts:
                    if pattern.search(text):
                        assert passes(gate, text.casefold()), (pattern.pattern[:60], text)


def test_trigram_index_finds_every_passing_entry() -> None:
    texts = [fold_chars(text).casefold() for text in _gold_texts()]
    for code in LANGS:
        rules = default_rules().get(code)
        for text in texts:
            wanted = [i for i, (_, _, gate) in enumerate(rules.entries) if passes(gate, text)]
            found = rules.candidates(text)
            assert set(wanted) <= set(found)
            assert found == sorted(found)


def test_most_rule_regexes_are_gated() -> None:
    for code in LANGS:
        entries = default_rules().get(code).entries
        gated = sum(1 for _, _, gate in entries if gate is not None)
        assert gated / len(entries) > 0.6, code
