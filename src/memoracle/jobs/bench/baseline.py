"""The baseline run beside memoracle: plain BM25 over the raw turns ("Speaker: text") in a
throwaway in-memory SQLite FTS5 table, not memoracle's store or ranking; and what fits
a token budget.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

from memoracle.recall.budget import format_line
from memoracle.types import Turn

_WORD = re.compile(r"\w+")


class TurnBaseline:
    """Plain BM25 over one conversation's raw turns ("Speaker: text"), in memory.

    The question's words are OR-ed (each quoted, so no word is read as FTS syntax) and
    ranked by FTS5's bm25(); no stop words, no stemming, no dates: the floor memoracle's
    ranking has to beat. Each turn comes back as the line a recall block would show
    (`format_line`: id, day, text), so both systems pay the same per line for the budget.
    """

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE turns USING fts5("
            "body, turn_id UNINDEXED, session_id UNINDEXED, line UNINDEXED, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        self._db.executemany(
            "INSERT INTO turns (body, turn_id, session_id, line) VALUES (?, ?, ?, ?)",
            [
                (
                    speaker_text(t),
                    t.turn_id or "",
                    t.session_id or "",
                    format_line(t.turn_id or "?", speaker_text(t), t.at),
                )
                for t in turns
            ],
        )

    def search(self, question: str) -> list[tuple[str, str, str]]:
        """Every matching turn, best first: (turn id, session id, line)."""
        words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self._db.execute(
            "SELECT turn_id, session_id, line FROM turns WHERE turns MATCH ? "
            "ORDER BY bm25(turns), rowid",
            (match,),
        ).fetchall()
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def close(self) -> None:
        self._db.close()


def speaker_text(turn: Turn) -> str:
    return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text


def within_budget(costs: Iterable[int], budget: int) -> int:
    """How many items, taken in order, fit while their summed cost stays ≤ budget."""
    total = 0
    n = 0
    for cost in costs:
        if total + cost > budget:
            break
        total += cost
        n += 1
    return n
