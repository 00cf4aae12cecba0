"""The conflict verdict: CONTRADICTION, REDUNDANT or COMPATIBLE, strong or weak, in
English, Russian, French and Spanish (lifecycle/conflicts.py)."""

from __future__ import annotations

import pytest

from memoracle.lifecycle.conflicts import (
    MULTI_VALUED,
    SlotIndex,
    Verdict,
    judge,
    resolve_against,
    same_value,
    single_valued,
)
from memoracle.lifecycle.slots import Slot, slot_of

C, R, OK = "CONTRADICTION", "REDUNDANT", "COMPATIBLE"

# (language, what is active, what is new, verdict, strength)
PAIRS: list[tuple[str, str, str, str, str]] = [
    # --- English -----------------------------------------------------------------------
    ("en", "I live in Paris.", "I moved to Lyon.", C, "strong"),
    ("en", "I live in Paris.", "I might move to Lyon.", C, "weak"),
    ("en", "I live in Paris.", "I no longer live in Paris.", C, "strong"),
    ("en", "I live in Lyon.", "I live in Lyon, France.", R, "strong"),
    ("en", "I live in Paris.", "Anna lives in Lyon.", OK, "strong"),
    ("en", "I work at Google.", "I work for Microsoft now.", C, "strong"),
    ("en", "I work at Google.", "I quit my job at Google.", C, "strong"),
    ("en", "I prefer tea over coffee.", "I prefer coffee.", C, "strong"),
    ("en", "My favourite colour is blue.", "My favourite colour is green.", C, "strong"),
    ("en", "I love sushi.", "I don't like sushi anymore.", C, "strong"),
    ("en", "The report is due Friday.", "The report deadline was moved to Monday.", C, "strong"),
    ("en", "The report is due Friday.", "The launch is due Monday.", OK, "strong"),
    ("en", "We use Postgres 16.", "We upgraded to PostgreSQL 17.", C, "strong"),
    ("en", "We use Postgres 16.", "We might upgrade to Postgres 17.", C, "weak"),
    ("en", "We use PostgreSQL 16.", "We use Postgres 16.", R, "strong"),
    ("en", "We use Postgres 16.", "We use Postgres 16.2.", R, "strong"),
    ("en", "I use vim.", "I switched from vim to Emacs.", C, "strong"),
    ("en", "I code in Python.", "I code in Rust.", OK, "strong"),
    (
        "en",
        "My phone number is 06 12 34 56 78.",
        "My new number is +33 6 99 88 77 66.",
        C,
        "strong",
    ),
    ("en", "My phone number is 06 12 34 56 78.", "Call me at +33 6 12 34 56 78.", R, "strong"),
    ("en", "My email is bob@example.com.", "My email is now bob@work.org.", C, "strong"),
    ("en", "My email is bob@example.com.", "Anna's email is anna@example.com.", OK, "strong"),
    ("en", "I'm married.", "I got divorced.", C, "strong"),
    ("en", "I'm vegetarian.", "I'm vegan.", C, "strong"),
    ("en", "We decided to use Postgres.", "We decided to go with MySQL.", C, "strong"),
    # --- Russian -----------------------------------------------------------------------
    ("ru", "Я живу в Париже.", "Я переехал в Лион.", C, "strong"),
    ("ru", "Я живу в Париже.", "Возможно, я перееду в Лион.", C, "weak"),
    ("ru", "Я живу в Париже.", "Я больше не живу в Париже.", C, "strong"),
    ("ru", "Я живу в Амстердаме.", "Я переехал в Амстердам.", R, "strong"),
    ("ru", "Я живу в Париже.", "Анна живёт в Лионе.", OK, "strong"),
    ("ru", "Я работаю в Яндексе.", "Теперь я работаю в Сбере.", C, "strong"),
    ("ru", "Я предпочитаю чай, а не кофе.", "Я предпочитаю кофе.", C, "strong"),
    ("ru", "Я обожаю суши.", "Я больше не люблю суши.", C, "strong"),
    ("ru", "Отчёт нужно сдать до пятницы.", "Дедлайн по отчёту — понедельник.", C, "strong"),
    ("ru", "Мы используем Postgres 16.", "Мы перешли на PostgreSQL 17.", C, "strong"),
    ("ru", "Мы используем Postgres 16.", "Возможно, мы перейдём на Postgres 17.", C, "weak"),
    (
        "ru",
        "Мой номер — +7 912 345 67 89.",
        "Мой новый номер телефона: +7 912 000 11 22.",
        C,
        "strong",
    ),
    ("ru", "Мой номер — +7 912 345 67 89.", "Мой номер телефона: 8 912 345 67 89.", R, "strong"),
    ("ru", "Моя почта — anna@example.ru.", "Моя почта — anna@new.ru.", C, "strong"),
    # --- French ------------------------------------------------------------------------
    ("fr", "J'habite à Paris.", "J'ai déménagé à Lyon.", C, "strong"),
    ("fr", "J'habite à Paris.", "Je vais peut-être déménager à Lyon.", C, "weak"),
    ("fr", "J'habite à Paris.", "Je n'habite plus à Paris.", C, "strong"),
    ("fr", "J'habite à Lyon.", "Nous habitons à Lyon.", R, "strong"),
    ("fr", "J'habite à Paris.", "Anna habite à Lyon.", OK, "strong"),
    ("fr", "Je travaille chez Google.", "Je travaille maintenant chez Microsoft.", C, "strong"),
    ("fr", "Je préfère le thé au café.", "Je préfère le café.", C, "strong"),
    ("fr", "J'adore les sushis.", "Je n'aime plus les sushis.", C, "strong"),
    (
        "fr",
        "Le rapport est à rendre pour vendredi.",
        "La date limite du rapport est lundi.",
        C,
        "strong",
    ),
    ("fr", "On utilise Postgres 16.", "On est passé à PostgreSQL 17.", C, "strong"),
    ("fr", "On utilise Postgres 16.", "On pourrait passer à Postgres 17.", C, "weak"),
    (
        "fr",
        "Mon numéro est le 06 12 34 56 78.",
        "Mon nouveau numéro est le 06 99 88 77 66.",
        C,
        "strong",
    ),
    (
        "fr",
        "Mon adresse e-mail est marie@example.fr.",
        "Mon mail c'est marie@nouveau.fr.",
        C,
        "strong",
    ),
    # --- Spanish -----------------------------------------------------------------------
    ("es", "Vivo en París.", "Me mudé a Lyon.", C, "strong"),
    ("es", "Vivo en París.", "Quizás me mude a Lyon.", C, "weak"),
    ("es", "Vivo en París.", "Ya no vivo en París.", C, "strong"),
    ("es", "Vivo en Lyon.", "Vivimos en Lyon, Francia.", R, "strong"),
    ("es", "Vivo en París.", "Ana vive en Lyon.", OK, "strong"),
    ("es", "Trabajo en Google.", "Ahora trabajo para Microsoft.", C, "strong"),
    ("es", "Prefiero el té al café.", "Prefiero el café.", C, "strong"),
    ("es", "Me encantan los sushis.", "Ya no me gustan los sushis.", C, "strong"),
    ("es", "El informe vence el viernes.", "La fecha límite del informe es el lunes.", C, "strong"),
    ("es", "Usamos Postgres 16.", "Migramos a PostgreSQL 17.", C, "strong"),
    ("es", "Usamos Postgres 16.", "Podríamos actualizar a Postgres 17.", C, "weak"),
    (
        "es",
        "Mi número es el 612 345 678.",
        "Mi número de teléfono es el +34 699 887 766.",
        C,
        "strong",
    ),
    ("es", "Mi correo es ana@example.es.", "Mi correo es ana@nuevo.es.", C, "strong"),
    # --- across languages: the language is the new memory's; topics in words differ ------
    ("fr", "I live in Paris.", "Je vais déménager à Lyon.", C, "strong"),
    ("es", "The report is due Friday.", "El informe vence el viernes.", OK, "strong"),
    (
        "fr",
        "Le rapport est à rendre pour vendredi.",
        "Le rapport est à rendre pour vendredi.",
        R,
        "strong",
    ),
]


def _verdict(lang: str, old: str, new: str) -> tuple[str, str]:
    found = resolve_against(new, [(7, old)], lang=lang, include_compatible=True)
    if found:
        ((memory_id, verdict),) = found
        assert memory_id == 7
        return verdict.kind, verdict.strength
    # No slot in common: what judge says of their first slots.
    new_slot, old_slot = slot_of(new, lang=lang), slot_of(old)
    assert new_slot is not None and old_slot is not None
    verdict = judge(new_slot, old_slot)
    return verdict.kind, verdict.strength


@pytest.mark.parametrize("case", PAIRS, ids=lambda case: f"{case[0]}:{case[1]} -> {case[2]}")
def test_verdict(case: tuple[str, str, str, str, str]) -> None:
    lang, old, new, kind, strength = case
    assert _verdict(lang, old, new) == (kind, strength)


@pytest.mark.parametrize("lang", ["en", "ru", "fr", "es"])
def test_every_language_has_each_verdict(lang: str) -> None:
    seen = {(kind, strength) for code, _, _, kind, strength in PAIRS if code == lang}
    assert {(C, "strong"), (C, "weak"), (R, "strong"), (OK, "strong")} <= seen


# --- judge -----------------------------------------------------------------------------------


def S(
    value: str,
    *,
    subject: str = "user",
    attribute: str = "lives_in",
    hedged: bool = False,
    negated: bool = False,
) -> Slot:
    return Slot(subject, attribute, value, hedged, negated, said=value.title())


@pytest.mark.parametrize(
    ("new", "old", "kind"),
    [
        (S("lyon"), S("paris"), C),
        (S("paris"), S("paris"), R),
        (S("paris", negated=True), S("paris"), C),  # "no longer in Paris"
        (S("paris"), S("paris", negated=True), C),  # back in Paris
        (S("paris", negated=True), S("paris", negated=True), R),
        (S("lyon", negated=True), S("paris"), OK),  # not in Lyon: says nothing of Paris
        (S("lyon"), S("paris", negated=True), OK),
        (S("lyon", subject="anna"), S("paris"), OK),
        (S("lyon", attribute="works_at"), S("paris"), OK),
        (S("rust", attribute="uses:language"), S("python", attribute="uses:language"), OK),
        (S("python", attribute="uses:language"), S("python", attribute="uses:language"), R),
        (
            S("python", attribute="uses:language", negated=True),
            S("python", attribute="uses:language"),
            C,
        ),
    ],
)
def test_judge(new: Slot, old: Slot, kind: str) -> None:
    assert judge(new, old).kind == kind


def test_strength_follows_the_new_slot_only() -> None:
    weak = judge(S("lyon", hedged=True), S("paris"))
    assert (weak.kind, weak.strength, weak.disputes, weak.supersedes) == (C, "weak", True, False)
    assert "hedged" in weak.reason
    strong = judge(S("lyon"), S("paris", hedged=True))
    assert (strong.strength, strong.supersedes, strong.disputes) == ("strong", True, False)
    assert judge(S("paris", hedged=True), S("paris")) == Verdict(
        R, "weak", "user lives_in: 'Paris' again", S("paris", hedged=True), S("paris")
    )


def test_reasons_say_what_changed() -> None:
    assert judge(S("lyon"), S("paris")).reason == "user lives_in: 'Lyon' replaces 'Paris'"
    assert judge(S("paris", negated=True), S("paris")).reason == (
        "user lives_in: no longer 'Paris'"
    )
    assert "different subjects: anna / user" in judge(S("lyon", subject="anna"), S("paris")).reason
    assert (
        "several values"
        in judge(
            S("rust", attribute="uses:language"), S("python", attribute="uses:language")
        ).reason
    )


def test_single_and_multi_valued_attributes() -> None:
    for attribute in ("lives_in", "works_at", "uses:editor", "uses:db", "version_of:python"):
        assert single_valued(attribute)
    for attribute in ("uses:language", "uses:framework", "prefers:other", "decision:other"):
        assert not single_valued(attribute)
        assert attribute in MULTI_VALUED


@pytest.mark.parametrize(
    ("attribute", "a", "b", "same"),
    [
        ("lives_in", "lyon", "lyon, france", True),
        ("lives_in", "france", "lyon, france", True),
        ("lives_in", "new york", "new york city", True),
        ("lives_in", "york", "new york", False),
        ("lives_in", "paris, france", "lyon, france", False),
        ("lives_in", "амстерд", "амстердам", True),  # case forms the stemmer left apart
        ("lives_in", "вен", "венец", False),
        ("lives_in", "paris", "parish", False),
        ("version_of:postgresql", "16", "16.2", True),
        ("version_of:python", "3.1", "3.12", False),
        ("version_of:python", "3.12", "3.12.1", True),
        ("phone", "612345678", "33612345678", True),
        ("phone", "89123456789", "79123456789", True),
        ("phone", "612345678", "612345679", False),
        ("phone", "12345", "912345", False),
        ("email", "a@x.org", "a@x.org", True),
        ("email", "a@x.org", "b@x.org", False),
        ("age", "34", "35", False),
        ("lives_in", "", "paris", False),
    ],
)
def test_same_value(attribute: str, a: str, b: str, same: bool) -> None:
    assert same_value(attribute, a, b) is same
    assert same_value(attribute, b, a) is same


# --- many memories at once -------------------------------------------------------------------

ACTIVE = [
    (1, "I live in Paris."),
    (2, "Anna lives in Lyon."),
    (3, "We use Postgres 16."),
    (4, "Thanks, that sounds great!"),
    (5, "I used to live in Berlin, now I live in Lyon."),
    (6, "We use PostgreSQL 16 and I live in Paris."),
]


def test_resolve_against_lists_what_needs_doing_in_candidate_order() -> None:
    found = resolve_against("I moved to Lyon.", ACTIVE)
    assert [(memory_id, verdict.kind) for memory_id, verdict in found] == [
        (1, C),
        (5, R),
        (6, C),
    ]
    assert resolve_against("Anna moved the meeting.", ACTIVE) == []


def test_one_verdict_per_memory_the_gravest() -> None:
    # Postgres 17: the tool is the same (REDUNDANT), the version is not (CONTRADICTION).
    ((memory_id, verdict),) = resolve_against("We upgraded to Postgres 17.", ACTIVE[2:3])
    assert (memory_id, verdict.kind) == (3, C)
    assert verdict.new is not None and verdict.new.attribute == "version_of:postgresql"


def test_compatible_verdicts_on_request() -> None:
    found = resolve_against("I code in Rust.", [(1, "I code in Python.")], include_compatible=True)
    assert [(memory_id, verdict.kind) for memory_id, verdict in found] == [(1, OK)]
    assert resolve_against("I code in Rust.", [(1, "I code in Python.")]) == []


def test_an_index_is_built_once_and_asked_many_times() -> None:
    index = SlotIndex(ACTIVE)
    assert len(index) == 8  # memory 4 has no slot; 3 has two (tool, version), 6 three
    assert [i for i, _ in index.against("I no longer live in Paris.")] == [1, 6]
    assert [i for i, _ in index.against("Anna moved to Marseille.")] == [2]
    assert [i for i, _ in index.against("Anna lives in Lyon.")] == [2]
    assert index.against("Je vais peut-être déménager à Lyon.")[0][1].strength == "weak"


def test_the_speaker_is_who_i_is() -> None:
    said_by_caroline = [(1, "I live in Paris."), (2, "Melanie lives in Lyon.")]
    found = resolve_against("I moved to Berlin.", said_by_caroline, speaker="Caroline")
    assert [(i, verdict.kind) for i, verdict in found] == [(1, C)]
    found = resolve_against("Melanie moved to Berlin.", said_by_caroline, speaker="Caroline")
    assert [i for i, _ in found] == [2]
    # Melanie speaking of Caroline, against what Caroline said of herself.
    index = SlotIndex(said_by_caroline, speaker="Caroline")
    found = index.against("Caroline moved to Berlin.", speaker="Melanie")
    assert [i for i, _ in found] == [1]
    assert [i for i, _ in index.against("I moved to Berlin.", speaker="Melanie")] == [2]
