"""A captured sentence made a self-contained statement: a reader understands it without
the conversation, months later, out of a search list.

Three things are written into the text, in the sentence's own language, by the rule
data of ``language/rules/statement/<lang>.toml`` (``en.toml`` is the commented
reference), never by code:

- third persons by name and relation: "my sister Noor lives in Seattle" -> "Noor
  (Caroline's sister) lives in Seattle"; unnamed, the speaker is the file's ``user``
  word ("Noor (User's sister)", "Claire (sœur de l'utilisateur)");
- the subject, when the speaker is named (a conversation of several people, such as
  an imported chat): "got promoted" said by Caroline -> "Caroline got promoted"; her
  own sentence gets her name in front, the sentence kept as said ("Caroline: I'm a
  data engineer now"), so that what reads it later (the lifecycle's slots, a task
  reported done) still can. In one user's store every "I" is the user's: the sentence
  stays as said (the memory's subject says whose it is);
- relative times, resolved by `capture.dates`: "yesterday" said on 2023-05-08 -> "on
  2023-05-07", in what happened or holds (events, facts). A guardrail's or a
  preference's time recurs ("never deploy on Friday"); a task's is its due date,
  kept apart (`due_at`) and matched by the lifecycle against the words said: both
  stay as said, as do absolute times ("on May 3", "in 2022").

Nothing is cut: a statement holds every word of the sentence but the ones it replaces,
so its key objects stay. The verbatim turn stays the memory's episode (provenance).
Assistant sentences get their dates only (their "I" is not the user). What a forget
directive names is made a statement the same way, so that it reads like the memory it
means ("forget that my sister Noor lives in Seattle" finds "Noor (User's sister) …").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memoracle.capture.rules import default_rules
from memoracle.errors import InvalidInput
from memoracle.language import datafiles
from memoracle.language.kit import PerLanguage, RuleFile, read_kind
from memoracle.types import Candidate, DateMention

__all__ = ["StatementFileError", "StatementRules", "statement", "statement_rules"]

# The date rules whose words depend on when they were said (capture/dates/grammar.py):
# those are resolved into the text; an absolute date is already understood.
_RELATIVE = frozenset(
    {
        "relative_day",
        "relative_week",
        "relative_month",
        "relative_year",
        "relative_period",
        "period_phrase",
        "weekday",
        "n_units_ago",
        "in_n_units",
        "day_of_month",
        "part_of_day",
    }
)
# Kinds whose time words anchor them once: "got promoted yesterday" (see the docstring).
_DATED_KINDS = frozenset({"event", "fact"})
# Kinds that say something about someone, whose subject the statement names. A task,
# decision or guardrail is the speaker's instruction or plan, read as said.
_ABOUT_SOMEONE = frozenset({"fact", "event", "preference"})
_FIELD = re.compile(r"\{(\w+)(:lower)?\}")
_WORD_BEFORE = re.compile(r"(\w[\w']*)\s+$")
# A bare date ("since {when}") as precise as the mention.
_BARE = {"month": "%Y-%m", "year": "%Y", "time": "%Y-%m-%d %H:%M"}
_GRANULARITIES = ("day", "week", "month", "year", "time", "part_of_day", "bare", "weekday")
# A time named by its weekday keeps the words said, the date beside them ("moved to
# Thursday (2026-11-05)", "on Tuesday at 10am (2026-11-03)"): the weekday is what the
# person said and will search for.
_WEEKDAY = frozenset({"weekday", "relative_weekday"})
_SENTENCE_END = re.compile(r"[.!?…]\s*$")


class StatementFileError(InvalidInput):
    """A statement rule file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class StatementRules:
    """One language's statement rules, compiled."""

    code: str
    user: str
    whose: str
    user_whose: str
    fallback: str
    roles: tuple[tuple[re.Pattern[str], str], ...]
    leads: tuple[tuple[re.Pattern[str], str], ...]
    dates: Mapping[str, str]
    bare_after: frozenset[str]
    habitual: tuple[re.Pattern[str], ...] = ()


@functools.cache
def _files() -> PerLanguage[StatementRules]:
    files, _ = read_kind("statement", error=StatementFileError, what="statement rule")
    return PerLanguage(files, _compile)


def statement_rules(code: str) -> StatementRules | None:
    """The compiled statement rules of `code`, or None for a language without a file."""
    return _files().get(code)


def statement(
    candidate: Candidate,
    dates: Sequence[DateMention],
    *,
    speaker: str | None,
    role: str,
) -> str:
    """`candidate.text` as a self-contained statement (see the module docstring);
    `dates` are the mentions found in that text (their spans index it)."""
    rules = statement_rules(candidate.lang)
    text = candidate.text
    if rules is None:
        return text
    if candidate.kind in _DATED_KINDS:
        text = _resolve_dates(text, dates, rules)
    if role == "assistant" or candidate.kind not in _ABOUT_SOMEONE:
        return text
    who = speaker or rules.user
    whose = _fill(rules.whose, {"who": speaker}) if speaker else rules.user_whose
    names = {"who": who, "whose": whose}
    for pattern, template in rules.roles:
        text = pattern.sub(functools.partial(_rewrite, template, names), text)
    if speaker is None:
        # One user's store: every "I" is theirs, and the lifecycle (slots, reports of a
        # task done) reads their sentences as said. A named speaker is one of several.
        return text
    for pattern, template in rules.leads:
        found = pattern.search(text)
        if found is not None:
            said = _fill(template, {**names, **_groups(found)})
            return _capital(text[: found.start()] + said + text[found.end() :])
    # The speaker's own sentence ("I", or no subject at all: "first day at Acme done!")
    # with no rewrite that fits: the subject is put in front.
    first_person = default_rules().get(rules.code).first_person
    own = candidate.subject == speaker
    if (own or (first_person is not None and first_person.search(text, text.casefold()))) and (
        not text.casefold().startswith(who.casefold())
    ):
        return _capital(_fill(rules.fallback, {**names, "text": text}))
    return text


def _resolve_dates(text: str, dates: Sequence[DateMention], rules: StatementRules) -> str:
    """Each relative mention's words replaced by the date it means, last first so that
    the earlier spans still index the text."""
    for mention in sorted(dates, key=lambda d: d.span[0], reverse=True):
        parts = {part.split(".", 1)[-1] for part in mention.rule.split("+")}
        if not parts & _RELATIVE:
            continue
        start, end = mention.span
        if text[start:end] != mention.text or any(h.search(text, 0, end) for h in rules.habitual):
            continue
        before = _WORD_BEFORE.search(text, 0, start)
        bare = before is not None and before.group(1).casefold() in rules.bare_after
        weekday = bool(parts & _WEEKDAY)
        key = "weekday" if weekday else "bare" if bare else mention.granularity
        when = mention.start
        said = _fill(
            rules.dates.get(key, rules.dates["day"]),
            {
                "said": mention.text,
                "date": when.strftime("%Y-%m-%d"),
                "month": when.strftime("%Y-%m"),
                "year": when.strftime("%Y"),
                "time": when.strftime("%H:%M"),
                "when": when.strftime(_BARE.get(mention.granularity, "%Y-%m-%d")),
            },
        )
        opens = not text[:start].strip() or _SENTENCE_END.search(text[:start]) is not None
        if opens and mention.text[:1].isupper():  # "Ayer vi…" -> "El 2023-… vi…"
            said = _capital(said)
        text = text[:start] + said + text[end:]
    return text


def _rewrite(template: str, names: Mapping[str, str], match: re.Match[str]) -> str:
    return _fill(template, {**names, **_groups(match)})


def _groups(match: re.Match[str]) -> dict[str, str]:
    return {key: value or "" for key, value in match.groupdict().items()}


def _fill(template: str, values: Mapping[str, str]) -> str:
    def one(field: re.Match[str]) -> str:
        value = values.get(field.group(1), "")
        return value.lower() if field.group(2) else value

    return _FIELD.sub(one, template)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- reading the files -----------------------------------------------------------------


def _compile(file: RuleFile) -> StatementRules:
    data, source = file.data, file.source
    error = StatementFileError
    datafiles.no_unknown(
        data,
        frozenset({"language", "subject", "words", "role", "lead", "dates"}),
        source,
        "top-level table",
        error,
    )
    subject = datafiles.table(data, "subject", source, error)
    words = datafiles.table(data, "words", source, error, required=False)
    roles = datafiles.strings(words.get("roles", []), source, "words.roles", error)
    # Longest first, so that "best friend" is tried before "friend".
    macros = {"roles": "|".join(re.escape(r) for r in sorted(roles, key=len, reverse=True))}
    dates = datafiles.table(data, "dates", source, error)
    for key in _GRANULARITIES:
        if not isinstance(dates.get(key), str):
            raise error(f"{source}: [dates] {key} must be a template string.")
    user = _text(subject, "user", source)
    return StatementRules(
        code=data["language"]["code"],
        user=user,
        whose=_text(subject, "whose", source),
        user_whose=_text(
            subject, "user_whose", source, default=_fill(subject.get("whose", ""), {"who": user})
        ),
        fallback=_text(subject, "fallback", source),
        roles=_rewrites(data.get("role", []), "role", macros, source),
        leads=_rewrites(data.get("lead", []), "lead", macros, source),
        dates={key: dates[key] for key in _GRANULARITIES},
        habitual=tuple(
            datafiles.regex(h, re.IGNORECASE, source, "dates.habitual", error)
            for h in datafiles.strings(dates.get("habitual", []), source, "dates.habitual", error)
        ),
        bare_after=frozenset(
            w.casefold()
            for w in datafiles.strings(
                dates.get("bare_after", []), source, "dates.bare_after", error
            )
        ),
    )


def _text(table: Mapping[str, Any], key: str, source: str, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value:
        raise StatementFileError(f"{source}: [subject] {key} must be a non-empty string.")
    return value


def _rewrites(
    raw: object, kind: str, macros: Mapping[str, str], source: str
) -> tuple[tuple[re.Pattern[str], str], ...]:
    if not isinstance(raw, list):
        raise StatementFileError(f"{source}: [[{kind}]] must be an array of tables.")
    compiled: list[tuple[re.Pattern[str], str]] = []
    for index, entry in enumerate(raw):
        where = f"[[{kind}]] #{index + 1}"
        if not isinstance(entry, dict) or set(entry) != {"pattern", "replace"}:
            raise StatementFileError(f"{source}: {where} needs exactly pattern and replace.")
        pattern, replace = entry["pattern"], entry["replace"]
        if not isinstance(pattern, str) or not isinstance(replace, str):
            raise StatementFileError(f"{source}: {where}: pattern and replace are strings.")
        compiled.append(
            (
                datafiles.pattern(
                    pattern, macros, re.IGNORECASE, source, where, StatementFileError
                ),
                replace,
            )
        )
    return tuple(compiled)
