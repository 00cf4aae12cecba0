from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.recall.query import (
    MAX_TERMS,
    content_words,
    is_when_question,
    lexical_queries,
)
from memoracle.storage_types import LexicalQuery, Term
from memoracle.store.fts import match_expression
from memoracle.text import search_form


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    """An FTS5 table with the store's tokenizer and indexed (stemmed) text, to run the
    expressions."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    con.executemany(
        "INSERT INTO t(rowid, body) VALUES (?, ?)",
        [
            (rowid, search_form(body))
            for rowid, body in [
                (1, "Caroline went to the LGBTQ support group on 7 May 2023"),
                (2, "Мы купили квартиру в Казани"),
                (3, "Élodie a déménagé à Lyon en mars"),
                (4, "Caroline likes painting sunsets"),
                (5, "Use Postgres 16 for the billing service"),
                (6, "Ёлка стоит в углу"),
            ]
        ],
    )
    yield con
    con.close()


def _rows(con: sqlite3.Connection, query: LexicalQuery) -> set[int]:
    expression = match_expression(query)  # as the store renders it
    return {r[0] for r in con.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))}


def test_and_first_then_or_then_prefixes() -> None:
    queries = lexical_queries("When did Caroline go to the LGBTQ support group?")
    assert [match_expression(q) for q in queries] == [  # stems, as the index holds them
        '"carolin" AND "go" AND "lgbtq" AND "support" AND "group"',
        '"carolin" OR "go" OR "lgbtq" OR "support" OR "group"',
        '"carol"* OR "go" OR "lgbtq" OR "suppo"* OR "group" OR "каро"*',  # a name: Каролина
    ]


def test_single_short_word_gives_one_expression() -> None:
    assert [match_expression(q) for q in lexical_queries("Lyon?")] == ['"lyon"']


def test_inflections_meet_through_their_stems(fts: sqlite3.Connection) -> None:
    """Snowball on both sides: "квартиры" finds "квартиру", "paints" finds "painting",
    a question's "May 7" finds the turn's "7 May" whatever the words' order."""
    assert _rows(fts, lexical_queries("квартиры в Казань")[0]) == {2}
    assert _rows(fts, lexical_queries("Caroline paints")[0]) == {4}
    assert _rows(fts, lexical_queries("supported groups")[0]) == {1}
    assert lexical_queries("квартиры")[0] == lexical_queries("квартирой")[0]


def test_no_content_words_no_query() -> None:
    assert lexical_queries("") == []
    assert lexical_queries("   ?!  ") == []
    assert lexical_queries("what is the") == []
    assert lexical_queries("и что это было") == []
    assert lexical_queries("a b c") == []  # single letters


def test_expressions_run_and_find(fts: sqlite3.Connection) -> None:
    and_, or_, *_ = lexical_queries("Caroline support group")
    assert _rows(fts, and_) == {1}
    assert _rows(fts, or_) == {1, 4}
    # Accents and case are the tokenizer's business; ё is folded before.
    assert _rows(fts, lexical_queries("ELODIE demenage")[0]) == {3}
    assert _rows(fts, lexical_queries("ёлка")[0]) == {6}
    # Inflection: the stems meet at once ("квартира" and "квартиру" are "квартир").
    queries = lexical_queries("квартира Казань")
    assert [_rows(fts, q) for q in queries] == [{2}, {2}, {2}]
    assert _rows(fts, lexical_queries("postgres 16")[0]) == {5}


def test_quotes_and_fts_syntax_are_neutralised(fts: sqlite3.Connection) -> None:
    for text in ['"; DROP TABLE t; --', "NEAR(a b) OR NOT *", "col:body ^start", 'He said "hi"']:
        for query in lexical_queries(text):
            _rows(fts, query)  # no sqlite3.OperationalError


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_gives_valid_expressions(text: str) -> None:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    con.execute("INSERT INTO t(body) VALUES ('some text')")
    try:
        for query in lexical_queries(text):
            con.execute(
                "SELECT rowid FROM t WHERE t MATCH ?", (match_expression(query),)
            ).fetchall()
    finally:
        con.close()


def test_stop_words_follow_the_query_language() -> None:
    assert content_words("Quand est-ce que son fils a eu son bac ?") == ["fils", "bac"]
    assert content_words("¿Qué hizo Caroline en el grupo?") == ["hizo", "Caroline", "grupo"]
    assert content_words("Когда Мелани ходила в поход с детьми?") == [
        "Мелани",
        "ходила",
        "поход",
        "детьми",
    ]
    # Too little evidence for French or Spanish: English rules, so "son" stays.
    assert content_words("son birthday") == ["son", "birthday"]
    assert content_words("my AI startup") == ["AI", "startup"]
    # The month "may" is not a stop word.
    assert content_words("what did we do in May") == ["May"]


def test_content_words_dedup_and_cap() -> None:
    assert content_words("Lyon lyon LYON Lyön") == ["Lyon"]
    huge = " ".join(f"word{i}" for i in range(20_000))
    assert len(content_words(huge)) == MAX_TERMS
    assert len(lexical_queries(huge)) == 2  # no alphabetic stems among "word123"
    assert content_words("Ёжик и ежик") == ["Ежик"]


@pytest.mark.parametrize(
    "text",
    [
        "When did Caroline go to the LGBTQ support group?",
        "when was my last dentist appointment",
        "What year did we move to Lisbon?",
        "ok, and when was that?",
        "Когда Мелани ходила в поход?",
        "когда я купил машину",
        "В каком году мы переехали?",
        "Quand est-ce que Marie a commencé la poterie ?",
        "quand a-t-elle déménagé",
        "¿Cuándo empezó Marta a pintar?",
        "cuándo fue la boda",
        "¿cuando fue la boda?",
        "Depuis quand tu joues du piano ?",
        "How long ago did I call mom?",
    ],
)
def test_when_questions(text: str) -> None:
    assert is_when_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Remind me when I get home",
        "What did Caroline paint?",
        "Cuando llegues, llámame",
        "Whenever you can, send the report.",
        "Quelle est ta couleur préférée ?",
        "",
        "?",
    ],
)
def test_not_when_questions(text: str) -> None:
    assert not is_when_question(text)


def test_terms_keep_their_words_and_prefixes() -> None:
    and_, or_, prefixed = lexical_queries("Élodie's квартира birthdays")
    assert not and_.any and or_.any and prefixed.any
    assert [t.text for t in and_.terms] == ["elodi", "квартир", "birthday"]
    assert [(t.text, t.prefix) for t in prefixed.terms] == [
        ("elodi", False),
        ("кварт", True),
        ("birthd", True),
        ("kvar", True),  # the Cyrillic word's first letters in Latin ones
    ]
    quoted = LexicalQuery((Term('say "hi"', prefix=True),))
    assert match_expression(quoted) == '"say ""hi"""*'
