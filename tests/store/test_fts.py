"""A lexical query rendered in FTS5's syntax (`store.fts`), the one place it is written:
every word of a text, all or any of them, quoted so any input runs."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.storage_types import LexicalQuery, Term, every_word
from memoracle.store.fts import match_expression


def test_every_word_of_a_text_once_as_the_index_holds_it() -> None:
    words = every_word('Élodie said "hi" twice, HI!')
    assert words is not None
    assert match_expression(words) == '"elodi" AND "said" AND "hi" AND "twice"'
    any_word = every_word("квартиры в Казани", any=True)
    assert any_word is not None
    assert match_expression(any_word) == '"квартир" OR "в" OR "казан"'
    assert every_word("!!! ...") is None


def test_quotes_are_doubled_and_a_prefix_is_starred() -> None:
    query = LexicalQuery((Term('say "hi"', prefix=True), Term("x")), any=True)
    assert match_expression(query) == '"say ""hi"""* OR "x"'


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=100), st.booleans(), st.booleans())
def test_any_text_gives_a_valid_expression(text: str, prefix: bool, any_: bool) -> None:
    """Whatever a text holds, its words (with or without a prefix star, all or any)
    make an expression FTS5 runs."""
    words = every_word(text, any=any_)
    if words is None:
        return
    terms = tuple(Term(t.text, prefix=prefix) for t in words.terms)
    con = sqlite3.connect(":memory:")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    con.execute("INSERT INTO t(body) VALUES ('some text')")
    try:
        expression = match_expression(LexicalQuery(terms, any=any_))
        con.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()
    finally:
        con.close()
