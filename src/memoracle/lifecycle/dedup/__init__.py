"""Near-duplicate scoring and grouping: text in, scores and groups out. Pure, no database.

Owns what "the same memory" means (docs/lifecycle.md): the signals, how they combine (`FORMULA`),
the threshold (`THRESHOLD`, 0.65), the entities that tell look-alike texts apart, and
how candidates are found among many memories without comparing every pair in Python.
Leaves to others: reading memories and vectors (`store`), merging a group into one
memory with every provenance and an audit entry (`engine` + `store`), the `memoracle
dedup` flags and exit codes (`cli`), and embedding (`embed`: vectors come in ready, one
model for all).

Words are `language.words.content_words` (NFKC, ё→е, case and accents folded, EN/RU/FR/ES
stop words dropped) cut to six letters, one plural "s" and one vowel ending dropped:
"квартиру"/"квартира" and "meeting"/"meetings" meet (so do "data"/"date": crude and
cheap, and every other signal has to agree too). Each entity (below) becomes one word
for its value: "€1,200" and "1200 €" are both "amount:eur:1200", "May 3" and
"2024-05-03" both "date:05-03". Segments are split at sentence ends, semicolons,
newlines, bullets, pipes and spaced dashes. The signals, each in [0, 1]:

- ``jaccard`` = |A∩B| / |A∪B|;
- ``containment`` = |A∩B| / min(|A|, |B|);
- ``segments``: each segment of one text is matched with its best segment of the other;
  the words so covered, over all its words + ½ (`SMOOTHING`: 2 words of 2 are weaker
  evidence than 10 of 10), in the direction that covers more, and never above
  |A∩B| / (min + ½). Containment that holds segment by segment: "Anna prefers Lyon" is
  not inside "Anna called. Tom prefers Lyon." though all three words are there;
- ``entities``: for each kind found in BOTH texts, the share of one text's entities
  that agree with one of the other's, in the better direction; the least over kinds;
  None when no kind is on both sides. A kind on one side only is neutral ("Anna lives in
  Lyon since 2021" still contains "Anna lives in Lyon"). Kinds (`ENTITY_KINDS`): URLs;
  emails; dates by `capture.dates.find_dates` (so "3 мая" is "May 3"), agreeing when
  their ranges overlap, a date without a year taking the other's year, relative ones
  ("yesterday") compared only with relative ones; ids (UUIDs, "ABC-123", "#123", hex
  of 7+ with a digit and a letter -- a short git hash agrees with its long form -- and
  runs of 10+ digits); amounts with a currency symbol or word; phone numbers, by their
  last nine digits ("+33 6 12 34 56 78" is "06 12 34 56 78"); versions ("v2.3",
  "16.1"; "4.2" agrees with "4.2.7"); other numbers; names: capitalised words of a text
  that has case, agreeing when the other text has the word at all, so a sentence-initial
  "Call" does not clash with "... to call ...";
- ``vector``: the caller's cosine of the two unit vectors; None without.

Combination (`FORMULA` "dedup/v1"), with E = ``entities`` and v' = the cosine mapped
linearly from [`VECTOR_LOW`, `VECTOR_HIGH`] onto [0, 1]::

    lexical = max(jaccard, 0.45·jaccard + 0.55·segments)
    text    = max(lexical, (lexical + v') / 2)     # lexical without a vector
    lifted  = text + 0.2·E·(1 − text)              # only if an identifying kind (not a
                                                   # number or a name) is in both
    score   = lifted · (0.3 + 0.7·E)               # no factor when E is None
                     · (0.3 if exactly one text is negated else 1)
                     · (0.85 if each text has a word the other lacks and no vector
                        reaches VECTOR_LOW: a swapped word is more often another value —
                        "the main database" / "the backup database" — than a
                        paraphrase, which only a vector can tell)

and 1.0 when the texts are equal after `memoracle.text.for_hash`. Why: ``segments``
(containment, segment by segment) carries most of the weight because a memory repeated
inside a longer one is the common duplicate; jaccard's share keeps a short text from
matching every text that mentions its words: wholly inside another, a text is a
duplicate when it holds about a third of the pair's words (two fifths for three words;
"Python" alone never). Jaccard alone is a floor, so the same words in another order
score 1. Vectors only raise the lexical score, at half weight: with the default encoder
paraphrases score 0.80-0.97 but so do "likes tea" / "likes coffee" (0.77) and "May 3" /
"May 5" (0.86), so a vector alone never makes a duplicate. Entities come last because
words and vectors are blind to them: agreeing identifiers lift the score a little,
differing values ("Postgres 15" / "16", "May 3" / "May 5", "Olga" / "Sofia") cut it to
at most 0.3 of itself. Negation ("not", "never", "n't", "не", "pas", "jamais", "nunca")
is a stop word for search, so it is checked apart, the same way. What words cannot
tell: one word swapped in a five-word text ("likes green tea" / "black tea" scores
0.64, a longer one more) reads as a paraphrase unless the word is a name or a value.

`find_duplicates` is NOT transitive: it takes keepers in `rank` order (lowest id first
by default) and gives each the not-yet-grouped memories that score at least the
threshold against that keeper itself, so every merged memory was compared with what it
is merged into, and a chain A~B~C never drags C in through B. No id is in two groups.

The parts: `model` (formula, threshold, scores), `entities` (values found in a
text), `profile` (a memory's words and values, agreement, `similarity`), `index`
(candidates among many memories).
"""

from memoracle.lifecycle.dedup.index import DedupIndex, find_duplicates, query
from memoracle.lifecycle.dedup.model import (
    ENTITY_KINDS,
    FORMULA,
    THRESHOLD,
    VECTOR_HIGH,
    VECTOR_LOW,
    DedupScore,
    DuplicateGroup,
    is_duplicate,
)
from memoracle.lifecycle.dedup.profile import similarity

__all__ = [
    "DedupIndex",
    "DedupScore",
    "DuplicateGroup",
    "ENTITY_KINDS",
    "FORMULA",
    "THRESHOLD",
    "VECTOR_HIGH",
    "VECTOR_LOW",
    "find_duplicates",
    "is_duplicate",
    "query",
    "similarity",
]
