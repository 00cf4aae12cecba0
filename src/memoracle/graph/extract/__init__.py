"""Entities and relations named in a text, by rules: the knowledge graph's extraction.

Owns `extract` and what it returns (`Extraction`, `EntityMention`, `RelationMention`),
`canonical_key` (the one key every spelling of a name shares), and the rule files:
``language/rules/graph/<lang>.toml`` per language (``en.toml`` is the commented reference) and
``language/rules/graph/values.toml``, shared. Types come from an `ontology.Ontology`; storing
mentions, merging them across memories and querying the graph are the store's and the
engine's. Pure: no I/O but reading the packaged files once per process.

Reused, not repeated: sentence splitting, language detection and the question,
hypothetical and hedge markers (`capture`); the normal form of names and the known
software names (`lifecycle.slots.value_key` and its vocabulary); month, weekday and day
words (capture's time words), which are never names.

What a sentence yields, in English, Russian, French and Spanish:

- Roles: a role word between the speaker's possessive and a name, "my wife Anna",
  "Anna, my wife", "Anna is my wife", "our dog Rex", "моя жена Анна", "mi jefe Marc",
  make the name's relation to the speaker: ``anna family_of user`` (role "wife"),
  ``rex has_owner user``, ``marc manages user``; "Anna's husband Marc" makes
  ``marc family_of anna``. A role phrase presupposes its relation, so it holds even in
  a question ("Did my wife Anna call?").
- Rules: a pattern per relation family, "I work at Acme", "Anna lives in Lyon", "we use
  Postgres, Redis and Kafka", "I report to Marc", "Apollo depends on Redis", "the Apollo
  project", "I met Anna", with their translations ("travaille chez", "trabaja en",
  "работает в", "habite à", "vive en", "живет в", "utilisons", "usamos", "используем").
  A rule's relation holds only in a claim: not in a question, a hypothetical or a hedged
  sentence (capture's markers), nor after a negation in its clause ("ya no trabajo en
  Google"); the names it types still count.

Precision over recall:

- A name is a run of capitalised words ("Anna", "Acme Corp", "Bank of America",
  "iPhone"), never a pronoun, sentence opener or other word of the file's ``not_names``,
  a month, weekday or day word, or a role word ("Mom").
- A name read where a pattern's target starts never starts the sentence: there a common
  word is capitalised too ("Side project" names no project).
- What follows a name must end its clause (a ``clause`` word, a number, punctuation):
  "I work at Acme as a designer" names Acme, "I work at Acme headquarters" nothing, "I
  emailed Acme support" no person.
- "Anna's" is a possessor, not the thing: "I work at Anna's bakery" names no employer.
- Known software names (slots' values) take their category's type where a rule types
  software ("we use Postgres": Infrastructure) and may then be lower case ("we use
  docker"); where a rule types places or projects they are no name ("we moved to
  Postgres").
- The first type a name gets in a text is its type; rules run in file order, those that
  type most surely first. A relation whose types the ontology does not allow is dropped.

Speaker: "I", "we", "me", "je", "nous", "yo", "я", "мы", … are the `speaker` (its key
`canonical_key(speaker)`), else ``"user"``, as in `lifecycle.slots`; "he", "she" and
"they" name nobody, so their relations are dropped. The speaker is an entity (a Person)
only when a relation names it.

Keys: `canonical_key` folds case and accents, drops a trailing possessive ("Anna's")
and the words before a name ("my wife Anna"), and then is `slots.value_key`: stop words
dropped, Russian case endings stripped ("Анной" -> "анн"), known aliases merged
("Postgres" -> "postgresql"). So "Anna", "my wife Anna" and "Anna's" share ``"anna"``.

Language: given, or detected; short texts fool detection, so when the detected language
finds no entity the others are tried (Russian only on Cyrillic text).

File format (``en.toml`` is the commented reference)::

    [language]   code = "en" (must equal the file name)
    [macros]     name = "regex"; {{name}} expands it. Built in: {{self}}, {{mine}} (the
                 word lists), {{role}} (every role word), {{role_<relation>}}
    [words]      self (the speaker), mine (the speaker's), determiners (skipped before
                 a name), connectors (lower-case words inside a name), lists (joining
                 names), clause (may follow a name), not_names
    [markers]    negation: regexes; one in the clause before a rule's target cancels it
    [roles]      pattern: regexes with groups role, source (the name), owner (whose;
                 absent: the speaker)
    [[role]]     relation, type (of the named entity), [role.words] label = [words]
    [[rule]]     id, pattern (regex or list), target (type); relation and source (type)
                 to make a relation; many (read a list of names)

    values.toml  [known] software, never: entity types; [known.types] Type = [slot
                 value categories]

Rule groups: ``source`` and ``target`` (a side with no group is the speaker) and
``role`` (its English label goes on the relation). A malformed file raises
`GraphRuleError` naming the file and the entry.

The parts: `model` (mentions, rules, sentences), `words` (text helpers), `reader`
(`GraphRules`, reading one text), `loading` (rule files; `extract`, `canonical_key`).
"""

from memoracle.graph.extract.loading import (
    canonical_key,
    default_graph_rules,
    extract,
    load_graph_rules,
)
from memoracle.graph.extract.model import (
    SPEAKER_TYPE,
    EntityMention,
    Extraction,
    GraphRuleError,
    RelationMention,
)
from memoracle.graph.extract.reader import GraphRules

__all__ = [
    "EntityMention",
    "Extraction",
    "GraphRuleError",
    "GraphRules",
    "RelationMention",
    "SPEAKER_TYPE",
    "canonical_key",
    "default_graph_rules",
    "extract",
    "load_graph_rules",
]
