"""dedup: what counts as the same memory (words, containment, segments, entities,
negation, vectors), in four languages; grouping many memories without comparing every
pair; and the promises callers rely on: symmetric, in [0, 1], no id in two groups, every
merged memory compared with its keeper."""

from __future__ import annotations

import random
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.lifecycle.dedup import (
    THRESHOLD,
    DedupIndex,
    DedupScore,
    find_duplicates,
    is_duplicate,
    query,
    similarity,
)

# -- pairs ---------------------------------------------------------------------------------

DUPLICATES = [
    pytest.param(
        "The user prefers dark mode in the editor",
        "In the editor, the user prefers dark mode",
        id="reordered",
    ),
    pytest.param("Anna lives in Lyon", "Anna lives in Lyon since 2021", id="containment"),
    pytest.param(
        "Anna lives in Lyon.",
        "We talked for an hour about work and holidays. Anna lives in Lyon.",
        id="segment",
    ),
    pytest.param(
        "Anna lives in Lyon and works at Airbus",
        "Anna works at Airbus. She lives in Lyon.",
        id="segments-reordered",
    ),
    pytest.param("Анна живёт в Лионе", "анна живет в лионе с 2021 года", id="ru-yo-case"),
    pytest.param("Anna vit à Lyon depuis 2020", "ANNA VIT A LYON DEPUIS 2020", id="fr-accents"),
    pytest.param(
        "La réunion avec Marc est prévue le 3 mai",
        "Réunion avec Marc prévue le 3 mai",
        id="fr-containment",
    ),
    pytest.param(
        "María trabaja en Madrid como ingeniera",
        "maria trabaja como ingeniera en madrid",
        id="es-accents-order",
    ),
    pytest.param(
        "Meeting with the bank on May 3", "Meeting with the bank on 2024-05-03", id="date-forms"
    ),
    pytest.param("Rent is 1200 € per month", "The rent is €1,200 a month", id="amount-forms"),
    pytest.param(
        "Anna's phone is +33 6 12 34 56 78", "Phone of Anna: 06 12 34 56 78", id="phone-forms"
    ),
    pytest.param(
        "We upgraded Django to 4.2", "We upgraded Django to version 4.2.7", id="version-prefix"
    ),
    pytest.param(
        "Deployed commit a1b2c3d to staging",
        "Deployed commit a1b2c3d4e5f6a7b8 to staging",
        id="short-hash",
    ),
    pytest.param(
        "El alquiler del piso es de 950 € al mes",
        "el alquiler del piso es de 950 euros al mes",
        id="es-currency-word",
    ),
    pytest.param("Call the dentist tomorrow", "Remind me to call the dentist tomorrow", id="verb"),
    pytest.param("Встреча с Анной 3 мая", "Встреча с Анной 3 мая в 15:00", id="ru-time"),
]


@pytest.mark.parametrize(("a", "b"), DUPLICATES)
def test_duplicates(a: str, b: str) -> None:
    score = similarity(a, b)
    assert is_duplicate(score), score
    assert not score.conflicts


# (a, b, the conflict named): high word overlap, different facts.
DIFFERENT = [
    pytest.param(
        "Team meeting with Anna, Tom and Marc about the Q3 roadmap on May 3",
        "Team meeting with Anna, Tom and Marc about the Q3 roadmap on May 5",
        "date",
        id="dates",
    ),
    pytest.param(
        "Flight to Lisbon with Marc booked for 2024-06-12",
        "Flight to Lisbon with Marc booked for 2024-06-19",
        "date",
        id="iso-dates",
    ),
    pytest.param(
        "Dentist appointment for Anna in March 2023",
        "Dentist appointment for Anna in March 2024",
        "date",
        id="years",
    ),
    pytest.param("Встреча с Анной 3 мая", "Встреча с Анной 5 мая", "date", id="ru-dates"),
    pytest.param(
        "Call with the Lyon office on May 3 at 3pm",
        "Call with the Lyon office on May 3 at 4pm",
        "date",
        id="times",
    ),
    pytest.param(
        "La cita con el dentista es el 3 de mayo",
        "La cita con el dentista es el 5 de mayo",
        "date",
        id="es-dates",
    ),
    pytest.param(
        "We run Postgres 15 in production", "We run Postgres 16 in production", "number", id="pg"
    ),
    pytest.param(
        "Upgraded Django to 4.2.1 on the staging servers",
        "Upgraded Django to 4.2.2 on the staging servers",
        "version",
        id="versions",
    ),
    pytest.param("Rent is 1200 € per month", "Rent is 1 300 € per month", "amount", id="amounts"),
    pytest.param(
        "Le loyer de l'appartement est de 800 €",
        "Le loyer de l'appartement est de 850 €",
        "amount",
        id="fr-amounts",
    ),
    pytest.param(
        "Anna's phone is +33 6 12 34 56 78",
        "Anna's phone is +33 6 12 34 56 79",
        "phone",
        id="phones",
    ),
    pytest.param(
        "Ticket ABC-123 is blocked by the database migration",
        "Ticket ABC-124 is blocked by the database migration",
        "id",
        id="tickets",
    ),
    pytest.param(
        "Olga vit à Paris et travaille chez Renault",
        "Sofia vit à Paris et travaille chez Renault",
        "name",
        id="names",
    ),
    pytest.param(
        "User has 2 cats named Tom and Jerry", "User has 3 cats named Tom and Jerry", "number"
    ),
    pytest.param("Anna likes coffee", "Anna doesn't like coffee", "negation", id="not"),
    pytest.param("Анна любит кофе", "Анна не любит кофе", "negation", id="ru-not"),
    pytest.param("Tom eats meat at home", "Tom never eats meat at home", "negation", id="never"),
    pytest.param("Marc aime le fromage", "Marc n'aime pas le fromage", "negation", id="fr-not"),
    pytest.param("A Lucía le gusta el café", "A Lucía no le gusta el café", "negation", id="es"),
]


@pytest.mark.parametrize(("a", "b", "kind"), DIFFERENT)
def test_differing_values_are_not_duplicates(a: str, b: str, kind: str) -> None:
    score = similarity(a, b)
    assert score.jaccard >= 0.5  # the words alone would say duplicate
    assert not is_duplicate(score), score
    assert kind in score.conflicts
    assert score.reason.startswith("different " + kind) or kind == "negation"


def test_vectors_blind_to_values_do_not_override_them() -> None:
    score = similarity("Meeting on May 3", "Meeting on May 5", vector_similarity=0.99)
    assert not is_duplicate(score)


def test_an_entity_on_one_side_only_is_neutral() -> None:
    score = similarity("Anna moved to Lyon", "Anna moved to Lyon in May 2021")
    assert is_duplicate(score)
    assert "date" not in score.conflicts


def test_dates_agree_when_one_is_more_precise() -> None:
    assert is_duplicate(similarity("Anna moved to Lyon in 2021", "Anna moved to Lyon in May 2021"))
    assert is_duplicate(
        similarity("Anna's birthday party is on May 3", "Anna's birthday party is on May 3 2024")
    )


def test_a_few_shared_words_inside_a_long_text_are_not_a_duplicate() -> None:
    long = "The backend is written in Python with FastAPI and runs on three servers"
    assert not is_duplicate(similarity("Python", long))
    # All three words occur, but not in one segment.
    assert not is_duplicate(
        similarity("Anna prefers Lyon", "Anna called about the budget. Tom prefers Lyon.")
    )


def test_one_word_swapped_in_a_short_text_is_not_a_duplicate() -> None:
    assert not is_duplicate(similarity("Anna likes tea", "Anna likes coffee"))


def test_vector_raises_a_paraphrase_but_never_makes_one_alone() -> None:
    a, b = "User's favourite food is sushi", "The user loves sushi more than anything"
    words = similarity(a, b)
    assert not is_duplicate(words)
    with_vector = similarity(a, b, vector_similarity=0.97)
    assert is_duplicate(with_vector)
    assert with_vector.vector == 0.97 and "vector" in with_vector.reason
    assert similarity(a, b, vector_similarity=0.3).score == words.score  # only raises
    assert not is_duplicate(similarity("Anna likes tea", "Tom hates golf", vector_similarity=1))


def test_threshold() -> None:
    assert THRESHOLD == 0.65
    score = similarity("Anna lives in Lyon.", "We talked about work. Anna lives in Lyon.")
    assert is_duplicate(score) == (score.score >= THRESHOLD)
    assert not is_duplicate(score, threshold=min(1.0, score.score + 0.01))


def test_same_text_after_normalisation() -> None:
    score = similarity("Anna  lives in LYON!", "anna lives in lyon")
    assert score.score == 1.0 and score.reason == "same text"


@pytest.mark.parametrize(
    ("a", "b"),
    [("", ""), ("", "x"), ("x", "x"), ("hello", "hello world"), ("!!!", "..."), ("a", "the")],
)
def test_empty_and_one_word_texts(a: str, b: str) -> None:
    score = similarity(a, b)
    assert 0.0 <= score.score <= 1.0
    assert similarity(b, a) == score


def test_empty_texts_share_nothing_with_others() -> None:
    assert similarity("", "Anna lives in Lyon").score == 0.0


def test_list_markers_and_comments_are_ignored() -> None:
    score = similarity("1. Buy milk <!-- ttl:2024-05-01 -->", "2. Buy milk")
    assert is_duplicate(score), score


# -- properties --------------------------------------------------------------------------

WORDS = (
    "Anna lives in Lyon since 2021 Анна живёт в Лионе мая réunion prévue le 3 mai not "
    "never Postgres 16 v2.3 4.2.7 ABC-123 $50 €1,200 +33 6 12 34 56 78 May 5 2024-05-03 "
    "the user prefers dark mode María ingeniera Madrid. ; | — yesterday a1b2c3d www.x.org"
).split()

texts = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join),
)


@settings(max_examples=150, deadline=None)
@given(texts, texts)
def test_symmetric(a: str, b: str) -> None:
    assert similarity(a, b) == similarity(b, a)


@settings(max_examples=150, deadline=None)
@given(texts, texts, st.one_of(st.none(), st.floats(-1, 1)))
def test_scores_in_unit_interval(a: str, b: str, vector: float | None) -> None:
    score = similarity(a, b, vector_similarity=vector)
    for field in fields(DedupScore):
        value = getattr(score, field.name)
        if isinstance(value, float) and field.name != "vector":
            assert 0.0 <= value <= 1.0, (field.name, value)


# -- many memories -------------------------------------------------------------------------

ITEMS = [
    (1, "Anna lives in Lyon"),
    (2, "anna lives in LYON!"),
    (3, "Anna lives in Lyon since 2021"),
    (4, "Meeting with the bank on May 3"),
    (5, "Meeting with the bank on May 5"),
    (6, "We run Postgres 16 in production"),
    (7, "In production we run Postgres 16"),
    (8, "The cat sleeps on the sofa"),
]


def test_groups() -> None:
    groups = find_duplicates(ITEMS)
    assert [(g.keep, sorted(g.merge_ids)) for g in groups] == [(1, [2, 3]), (6, [7])]
    first = groups[0]
    assert first.merge[0] == (2, similarity("Anna lives in Lyon", "anna lives in LYON!"))
    assert all(is_duplicate(score) for g in groups for _, score in g.merge)


def test_rank_picks_the_keeper() -> None:
    groups = find_duplicates(ITEMS, rank=lambda memory_id: -memory_id)  # newest kept
    assert [(g.keep, sorted(g.merge_ids)) for g in groups] == [(7, [6]), (3, [1, 2])]


def test_grouping_is_not_transitive() -> None:
    a = "apricot banana cherry damson elderberry"
    b = "apricot banana cherry damson elderberry figs grapes hazelnuts"
    c = "damson elderberry figs grapes hazelnuts"
    assert is_duplicate(similarity(a, b)) and is_duplicate(similarity(b, c))
    assert not is_duplicate(similarity(a, c))
    groups = find_duplicates([(1, a), (2, b), (3, c)])
    assert [(g.keep, g.merge_ids) for g in groups] == [(1, (2,))]  # c is not dragged in


def test_a_swapped_word_is_another_value_unless_a_vector_says_paraphrase() -> None:
    a = "We decided to use the main database for the project with Anna."
    b = "We decided to use the backup database for the project with Anna."
    assert not is_duplicate(similarity(a, b))
    assert is_duplicate(similarity(a, b, vector_similarity=0.97))
    assert is_duplicate(similarity("The user prefers dark mode in the editor.",
                                   "In the editor, the user prefers dark mode."))  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS[:24]), min_size=1, max_size=6), max_size=30))
def test_no_id_in_two_groups_and_every_merge_was_compared_with_its_keeper(
    word_lists: list[list[str]],
) -> None:
    items = [(n, " ".join(words)) for n, words in enumerate(word_lists)]
    text = dict(items)
    groups = find_duplicates(items)
    ids = [g.keep for g in groups] + [i for g in groups for i in g.merge_ids]
    assert len(ids) == len(set(ids))
    for group in groups:
        for memory_id, score in group.merge:
            assert score == similarity(text[group.keep], text[memory_id])
            assert is_duplicate(score)


def test_empty_inputs() -> None:
    assert find_duplicates([]) == []
    assert find_duplicates([(1, "")]) == []
    assert find_duplicates([(1, "Lyon")]) == []
    assert query("Anna lives in Lyon", []) == []
    assert query("", [(1, "Anna lives in Lyon")]) == []


def test_query_best_first() -> None:
    found = query("Anna lives in Lyon since 2021", ITEMS, limit=3)
    assert found[0] == (3, similarity("Anna lives in Lyon since 2021", ITEMS[2][1]))
    assert [i for i, _ in found] == [3, 1, 2]
    assert is_duplicate(found[0][1])
    scores = [s.score for _, s in found]
    assert scores == sorted(scores, reverse=True)


def test_query_new_text_is_not_a_duplicate() -> None:
    found = query("Meeting with the bank on May 9", ITEMS)
    assert found and not is_duplicate(found[0][1])
    assert query("Quantum chromodynamics", ITEMS) == []


def test_index_answers_many_queries() -> None:
    index = DedupIndex(ITEMS)
    assert len(index) == len(ITEMS)
    assert index.query("the cat sleeps on the sofa")[0][0] == 8
    assert index.query("Postgres 16 runs in production")[0][0] in (6, 7)


def test_vectors_find_paraphrases_words_miss() -> None:
    items = [
        (1, "User's favourite food is sushi"),
        (2, "The user loves sushi more than anything"),
        (3, "Anna lives in Lyon"),
    ]
    rng = np.random.default_rng(0)
    same = rng.normal(size=16).astype(np.float32)
    same /= np.linalg.norm(same)
    other = rng.normal(size=16).astype(np.float32)
    other /= np.linalg.norm(other)
    vectors = {1: same, 2: same, 3: other}
    assert find_duplicates(items) == []
    groups = find_duplicates(items, vectors=vectors)
    assert [(g.keep, g.merge_ids) for g in groups] == [(1, (2,))]
    assert groups[0].merge[0][1].vector == pytest.approx(1.0)
    found = query("User's favourite food is sushi!", items, vector=same, vectors=vectors)
    assert found[0][0] == 1 and found[1][0] == 2 and is_duplicate(found[1][1])


# -- at scale -------------------------------------------------------------------------------

NAMES = ["Anna", "Tom", "Marc", "Lea", "Ivan", "Olga", "Pierre", "Sofia", "Diego", "Lucia"]
PLACES = ["Lyon", "Paris", "Berlin", "Madrid", "Tokyo", "Lisbon", "Prague", "Oslo", "Rome"]
TOOLS = ["Postgres", "Redis", "Django", "React", "Kafka", "Nginx", "Grafana", "Sentry"]
TOPICS = ["invoice", "contract", "report", "migration", "release", "budget", "roadmap"]


def _memory(rng: random.Random, n: int) -> str:
    """A short memory carrying its own ticket id, so no two of them are duplicates."""
    name, place, tool, topic = (rng.choice(pool) for pool in (NAMES, PLACES, TOOLS, TOPICS))
    forms = [
        f"{name} is reviewing the {topic} for {tool} in {place}, ticket OPS-{n}",
        f"Ticket OPS-{n}: {tool} {topic} blocked until {name} is back from {place}",
        f"{name} asked to move the {topic} meeting to {place} (see OPS-{n})",
        f"OPS-{n} tracks the {tool} {topic} that {name} owns",
    ]
    return rng.choice(forms)


def _copy(rng: random.Random, text: str) -> str:
    """A duplicate as people write them: shouted, reordered, repeated inside more."""
    words = text.split()
    return rng.choice(
        [
            text.upper(),
            " ".join(words[len(words) // 2 :] + words[: len(words) // 2]),
            f"{text}. Mentioned twice today.",
            f"- {text}!",
        ]
    )


@pytest.mark.slow
def test_ten_thousand_memories() -> None:
    rng = random.Random(0)
    text: dict[int, str] = {}
    copies: dict[int, int] = {}  # copy id -> original id
    ticket: dict[int, int] = {}
    for memory_id in range(1, 10_001):
        if memory_id > 100 and memory_id % 10 == 0:
            original = rng.randrange(1, memory_id)
            original = copies.get(original, original)
            copies[memory_id] = original
            text[memory_id] = _copy(rng, text[original])
            ticket[memory_id] = ticket[original]
        else:
            text[memory_id] = _memory(rng, memory_id)
            ticket[memory_id] = memory_id
    items = list(text.items())
    groups = find_duplicates(items)
    group_of = {i: g.keep for g in groups for i in (g.keep, *g.merge_ids)}
    assert len(group_of) == sum(1 + len(g.merge) for g in groups)  # no id twice
    for copy, original in copies.items():
        assert group_of.get(copy) == group_of.get(original) is not None, (copy, original)
    for group in groups:  # nothing merged across tickets
        assert {ticket[i] for i in (group.keep, *group.merge_ids)} == {ticket[group.keep]}


def test_lowercase_codes_are_ids_that_must_agree() -> None:
    assert not is_duplicate(similarity("I prefer option a-5.", "I prefer option b-5."))
    assert is_duplicate(similarity("ticket abc-12 is done", "Ticket ABC-12 is done."))
