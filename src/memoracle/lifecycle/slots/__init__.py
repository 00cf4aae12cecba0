"""Subject + attribute slots: which single fact a sentence states, as comparable data.

Owns `Slot`, the closed set of attributes (`ATTRIBUTES`), the slot pattern files
(``language/rules/slots/<lang>.toml`` per language plus ``values.toml``, shared) and the
normalisation that makes two values comparable (`value_key`). Judging a new slot against
an old one (contradiction, redundancy) is `conflicts`; storing the verdict is the
engine's. Sentence splitting, language detection and the question / hypothetical
markers are reused from `capture`.

"I live in Paris" said by the user is ``Slot("user", "lives_in", "paris")``; "My wife
Anna moved to Lyon" is ``Slot("anna", "lives_in", "lyon")``. A slot is a claim that an
attribute holds one value *now*, so questions ("Do you live in Lyon?") and hypotheticals
("If I lived in Lyon…") yield none, and neither do sentences about an unknown referent
("She lives in Lyon": whose?) or too vague to compare ("I work at a startup").

Subjects: the speaker's words ("I", "my", "we", "je", "я", "yo", …) are the `speaker`
(folded like a name), else ``"user"``; a name ("Anna", "Anna's", "my wife Anna") is the
name case-folded without accents (``"anna"``), Russian names also without their case
ending ("Анна", "телефон Анны" -> ``"анн"``); a relative without a name is
``"<speaker>'s <kin>"`` with kin in English whatever the language (``"user's wife"``).
"He", "she", "you" and "they" name nobody we can pin down: no slot.

Attributes (`ATTRIBUTES`; which are single-valued is `conflicts.MULTI_VALUED`'s
complement): lives_in, works_at, job_title, name, age, birthday, phone, email, address,
timezone, relationship_status, diet, and the parametrised pet_name:<animal>,
prefers:<topic>, favourite:<topic>, likes:<thing>, uses:<category>, version_of:<tool>,
decision:<topic>, due:<task>. A topic or category comes, in this order, from the value
("vim" is an ``editor`` by ``values.toml``), from the words naming it ("my favourite
colour"), from the alternative ("tabs over spaces": ``indentation``), from the pair of
alternatives (``prefers:cats|dogs``), else from the rule's `fallback` (``other``) or no
slot at all. ``likes:<thing>`` holds ``like`` or ``dislike``.

Hedges ("I might move to Lyon", "возможно", "peut-être", "quizás", plans and intentions)
set ``hedged``: a weak claim that disputes rather than supersedes. Negation ("I no longer
live in Paris", "я больше не работаю в …", "je n'habite plus à …", "ya no vivo en …")
keeps the slot with ``negated=True``: it contradicts the same value and says nothing
about any other (see `conflicts.judge`). "I don't like sushi" is not a negation but the
value ``dislike``.

Values are compared in `value_key` form: NFKC, ё→е, case and accents folded, articles
and prepositions dropped, Russian case endings stripped ("в Париже" → "париж"), known
aliases merged ("Postgres" → "postgresql", "marié" → "married", "vendredi" →
"friday"). Phone numbers keep digits only. A trailing version number ("Postgres 16")
yields a ``version_of:<tool>`` slot besides the ``uses:<category>`` one; a tool with no
known category yields only its version slot ("We use Frobnicator 2.3"), and none at all
without a version. Dates stay words: "Friday" and "next Friday" differ, and "May 17" is
not resolved to a day (the lead may resolve them with `capture.dates`).

Language: given, or detected; short texts fool detection, so when the detected language
finds no slot the other languages are tried. The packaged files are read once per
process (`default_slots`, like `capture.rules.default_rules`).

File format (``en.toml`` is the commented reference)::

    [language]   code = "en" (must equal the file name)
    [macros]     name = "regex"; {{name}} in a pattern or macro expands it
    [markers]    hedge, negation (before the value, in its clause), negation_after (right
                 after the value): lists of regexes
    [subjects]   self = words meaning the speaker; skip = capitalised words that are not
                 names ("She", "Now"); [subjects.kin] english = [words]
    [normalise]  stopwords (dropped from values and topics), suffixes (endings stripped
                 from words of 4+ letters)
    [aliases]    canonical = [words]        merged with values.toml's
    [topics]     topic = [words naming it]  merged with values.toml's
    [categories] category = [values in it] merged with values.toml's
    [[slot]]     id, attribute ("lives_in", "prefers:{topic}", "due:{thing}"), pattern
                 (regex or list); optional: value (fixed), negated (the pattern itself
                 says "no longer"), negatable (false: negation words are part of the
                 value), fallback (topic when none is found), versioned (a trailing
                 version adds version_of:<tool>), unless (regexes vetoing the sentence),
                 not_values (regexes vetoing a value that starts with them)

Named groups: ``value`` (required unless the rule fixes it), ``subject`` (absent: the
speaker), ``topic`` ("{topic}" / "{thing}" in the attribute), ``other`` (the rejected
alternative). Patterns match case-insensitively one sentence whose quotes and ё are
folded (`language.words.fold_chars`); write case-sensitive parts as ``(?-i:…)``. Rules run in
file order and every rule may add slots, but a value already claimed by an earlier rule
is not claimed again ("we moved to Postgres 16" is a tool, not a home).

The parts: `loading` (files to a `SlotBook`), `matcher` (a sentence to its slots),
`names` (comparable keys), `model` (slots and rules as data).
"""

from memoracle.lifecycle.slots.loading import (
    default_slots,
    load_slots,
    slot_of,
    slots_of,
    value_key,
)
from memoracle.lifecycle.slots.matcher import SlotBook
from memoracle.lifecycle.slots.model import (
    ANY_VALUE,
    ATTRIBUTES,
    DEFAULT_SUBJECT,
    Slot,
    SlotFileError,
    Vocabulary,
)

__all__ = [
    "ANY_VALUE",
    "ATTRIBUTES",
    "DEFAULT_SUBJECT",
    "Slot",
    "SlotBook",
    "SlotFileError",
    "Vocabulary",
    "default_slots",
    "load_slots",
    "slot_of",
    "slots_of",
    "value_key",
]
