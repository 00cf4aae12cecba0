"""Slots: which attribute of whom a sentence states, in English, Russian, French and
Spanish (lifecycle/slots.py and the pattern files language/rules/slots/*.toml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoracle.lifecycle.slots import (
    ATTRIBUTES,
    Slot,
    SlotFileError,
    load_slots,
    slot_of,
    slots_of,
    value_key,
)

U = "user"


def S(
    subject: str, attribute: str, value: str, *, hedged: bool = False, negated: bool = False
) -> Slot:
    return Slot(subject, attribute, value, hedged, negated)


# (language, sentence, the first slot it states)
STATED: list[tuple[str, str, Slot]] = [
    # --- English -----------------------------------------------------------------------
    ("en", "I live in Paris.", S(U, "lives_in", "paris")),
    ("en", "I moved to Lyon.", S(U, "lives_in", "lyon")),
    ("en", "I'm based in Berlin.", S(U, "lives_in", "berlin")),
    ("en", "I might move to Lyon.", S(U, "lives_in", "lyon", hedged=True)),
    ("en", "I'm thinking about moving to Lyon, France.", S(U, "lives_in", "lyon", hedged=True)),
    ("en", "I no longer live in Paris.", S(U, "lives_in", "paris", negated=True)),
    ("en", "I don't live in Paris anymore.", S(U, "lives_in", "paris", negated=True)),
    ("en", "I moved to Amsterdam two years ago.", S(U, "lives_in", "amsterdam")),
    ("en", "My wife Anna lives in Berlin.", S("anna", "lives_in", "berlin")),
    ("en", "Anna moved to Lyon.", S("anna", "lives_in", "lyon")),
    ("en", "My brother lives in Denver with his wife.", S("user's brother", "lives_in", "denver")),
    ("en", "Mom lives in Florida.", S("user's mother", "lives_in", "florida")),
    ("en", "I work at Google.", S(U, "works_at", "google")),
    ("en", "I work for Microsoft now.", S(U, "works_at", "microsoft")),
    ("en", "I got a job at Stripe.", S(U, "works_at", "stripe")),
    ("en", "I quit my job at Google.", S(U, "works_at", "google", negated=True)),
    ("en", "My wife works at Apple.", S("user's wife", "works_at", "apple")),
    ("en", "I work as a nurse.", S(U, "job_title", "nurse")),
    ("en", "I'm a software engineer.", S(U, "job_title", "software engineer")),
    ("en", "I prefer tea over coffee.", S(U, "prefers:drink", "tea")),
    ("en", "I prefer coffee.", S(U, "prefers:drink", "coffee")),
    ("en", "I prefer tabs over spaces, fight me.", S(U, "prefers:indentation", "tabs")),
    ("en", "My preferred editor is Neovim.", S(U, "prefers:editor", "neovim")),
    ("en", "I prefer window seats.", S(U, "prefers:seat", "window seats")),
    ("en", "My favourite colour is blue.", S(U, "favourite:colour", "blue")),
    ("en", "Paris is my favourite city.", S(U, "favourite:city", "paris")),
    ("en", "I love sushi.", S(U, "likes:sushi", "like")),
    ("en", "I don't like sushi anymore.", S(U, "likes:sushi", "dislike")),
    ("en", "The report is due Friday.", S(U, "due:report", "friday")),
    (
        "en",
        "I think the report is due next Friday.",
        S(U, "due:report", "next friday", hedged=True),
    ),
    ("en", "The report deadline was moved to Monday.", S(U, "due:report", "monday")),
    ("en", "I need to finish the report by Friday.", S(U, "due:report", "friday")),
    ("en", "The meeting was moved to Thursday.", S(U, "due:meeting", "thursday")),
    ("en", "We use Postgres 16.", S(U, "uses:db", "postgresql")),
    ("en", "I switched from vim to Emacs.", S(U, "uses:editor", "emacs")),
    ("en", "I code in Python.", S(U, "uses:language", "python")),
    ("en", "Our Python version is 3.12.", S(U, "version_of:python", "3.12")),
    ("en", "We upgraded Postgres to 17.", S(U, "version_of:postgresql", "17")),
    ("en", "We decided to use Postgres for the backend.", S(U, "decision:db", "postgresql")),
    ("en", "Let's use Postgres 16 for the billing service.", S(U, "decision:db", "postgresql")),
    ("en", "My phone number is +33 6 12 34 56 78.", S(U, "phone", "33612345678")),
    ("en", "Anna's phone number is 06 11 22 33 44.", S("anna", "phone", "611223344")),
    ("en", "Call me at 555-123-4567.", S(U, "phone", "5551234567")),
    ("en", "My email is bob@example.com.", S(U, "email", "bob@example.com")),
    ("en", "My sister's email is sis@example.com.", S("user's sister", "email", "sis@example.com")),
    ("en", "I live at 12 Baker Street, London.", S(U, "address", "12 baker street, london")),
    ("en", "My timezone is CET.", S(U, "timezone", "cet")),
    ("en", "I'm married.", S(U, "relationship_status", "married")),
    ("en", "I'm not married.", S(U, "relationship_status", "married", negated=True)),
    ("en", "I'm vegan.", S(U, "diet", "vegan")),
    ("en", "I'm 34 years old.", S(U, "age", "34")),
    ("en", "My dog's name is Rex.", S(U, "pet_name:dog", "rex")),
    ("en", "My name is Bob.", S(U, "name", "bob")),
    # --- Russian (ё folded, case endings stripped: "в Париже" -> "париж") --------------
    ("ru", "Я живу в Париже.", S(U, "lives_in", "париж")),
    ("ru", "Я переехал в Лион.", S(U, "lives_in", "лион")),
    ("ru", "Возможно, я перееду в Лион.", S(U, "lives_in", "лион", hedged=True)),
    ("ru", "Подумываю переехать в Лион.", S(U, "lives_in", "лион", hedged=True)),
    ("ru", "Я больше не живу в Париже.", S(U, "lives_in", "париж", negated=True)),
    ("ru", "Моя жена Анна живёт в Берлине.", S("анн", "lives_in", "берлин")),
    (
        "ru",
        "Мой брат живёт в Новосибирске с женой.",
        S("user's brother", "lives_in", "новосибирск"),
    ),
    ("ru", "Я работаю в Яндексе.", S(U, "works_at", "яндекс")),
    ("ru", "Я больше не работаю в Яндексе.", S(U, "works_at", "яндекс", negated=True)),
    ("ru", "Я уволился из Яндекса.", S(U, "works_at", "яндекс", negated=True)),
    ("ru", "Я работаю врачом.", S(U, "job_title", "врач")),
    ("ru", "Я врач.", S(U, "job_title", "врач")),
    ("ru", "Я предпочитаю чай, а не кофе.", S(U, "prefers:drink", "чаи")),
    ("ru", "Мой любимый цвет — синий.", S(U, "favourite:colour", "син")),
    ("ru", "Я обожаю суши.", S(U, "likes:суш", "like")),
    ("ru", "Я больше не люблю суши.", S(U, "likes:суш", "dislike")),
    ("ru", "Отчёт нужно сдать до пятницы.", S(U, "due:отчет", "friday")),
    ("ru", "Дедлайн по отчёту — понедельник.", S(U, "due:отчет", "monday")),
    ("ru", "Встречу перенесли на четверг.", S(U, "due:встреч", "thursday")),
    ("ru", "Мы используем Postgres 16.", S(U, "uses:db", "postgresql")),
    ("ru", "Я перешёл с vim на Emacs.", S(U, "uses:editor", "emacs")),
    ("ru", "Мы решили использовать Postgres для бэкенда.", S(U, "decision:db", "postgresql")),
    ("ru", "Мой номер — +7 912 345 67 89.", S(U, "phone", "79123456789")),
    ("ru", "Телефон Анны — +7 900 111 22 33.", S("анн", "phone", "79001112233")),
    ("ru", "Моя почта — anna@example.ru.", S(U, "email", "anna@example.ru")),
    ("ru", "Я замужем.", S(U, "relationship_status", "married")),
    ("ru", "Я вегетарианка.", S(U, "diet", "vegetarian")),
    ("ru", "Мне 34 года.", S(U, "age", "34")),
    ("ru", "Мою собаку зовут Рекс.", S(U, "pet_name:dog", "рекс")),
    # --- French ----------------------------------------------------------------------------
    ("fr", "J'habite à Paris.", S(U, "lives_in", "paris")),
    ("fr", "J'ai déménagé à Lyon.", S(U, "lives_in", "lyon")),
    ("fr", "Je vais peut-être déménager à Lyon.", S(U, "lives_in", "lyon", hedged=True)),
    ("fr", "Je n'habite plus à Paris.", S(U, "lives_in", "paris", negated=True)),
    ("fr", "Ma femme Anna habite à Berlin.", S("anna", "lives_in", "berlin")),
    (
        "fr",
        "Mon frère habite à Bordeaux avec sa femme.",
        S("user's brother", "lives_in", "bordeaux"),
    ),
    ("fr", "Je travaille chez Google.", S(U, "works_at", "google")),
    ("fr", "Je ne travaille plus chez Google.", S(U, "works_at", "google", negated=True)),
    ("fr", "J'ai quitté mon job chez Google.", S(U, "works_at", "google", negated=True)),
    ("fr", "Je travaille comme infirmière.", S(U, "job_title", "infirmiere")),
    ("fr", "Je préfère le thé au café.", S(U, "prefers:drink", "the")),
    ("fr", "Ma couleur préférée est le bleu.", S(U, "favourite:colour", "bleu")),
    ("fr", "J'adore les sushis.", S(U, "likes:sushis", "like")),
    ("fr", "Je n'aime plus les sushis.", S(U, "likes:sushis", "dislike")),
    ("fr", "Le rapport est à rendre pour vendredi.", S(U, "due:rapport", "friday")),
    ("fr", "La date limite du rapport est lundi.", S(U, "due:rapport", "monday")),
    ("fr", "La réunion a été décalée à jeudi.", S(U, "due:reunion", "thursday")),
    ("fr", "On utilise Postgres 16.", S(U, "uses:db", "postgresql")),
    ("fr", "Je suis passé de vim à Emacs.", S(U, "uses:editor", "emacs")),
    ("fr", "On part sur React pour le front.", S(U, "decision:framework", "react")),
    ("fr", "Mon numéro est le 06 12 34 56 78.", S(U, "phone", "612345678")),
    ("fr", "Le numéro d'Anna est le 06 11 22 33 44.", S("anna", "phone", "611223344")),
    ("fr", "Mon adresse e-mail est marie@example.fr.", S(U, "email", "marie@example.fr")),
    ("fr", "Je suis mariée.", S(U, "relationship_status", "married")),
    ("fr", "Je suis végétarienne.", S(U, "diet", "vegetarian")),
    ("fr", "J'ai 34 ans.", S(U, "age", "34")),
    ("fr", "Mon chien s'appelle Rex.", S(U, "pet_name:dog", "rex")),
    ("fr", "Je m'appelle Marie.", S(U, "name", "marie")),
    # --- Spanish (the pronoun is dropped: "vivo en" is the speaker) ----------------------
    ("es", "Vivo en París.", S(U, "lives_in", "paris")),
    ("es", "Me mudé a Lyon.", S(U, "lives_in", "lyon")),
    ("es", "Quizás me mude a Lyon.", S(U, "lives_in", "lyon", hedged=True)),
    ("es", "Estoy pensando en mudarme a Lyon.", S(U, "lives_in", "lyon", hedged=True)),
    ("es", "Ya no vivo en París.", S(U, "lives_in", "paris", negated=True)),
    ("es", "Mi esposa Ana vive en Berlín.", S("ana", "lives_in", "berlin")),
    ("es", "Mi hermano vive en Bilbao con su mujer.", S("user's brother", "lives_in", "bilbao")),
    ("es", "Trabajo en Google.", S(U, "works_at", "google")),
    ("es", "Ya no trabajo en Google.", S(U, "works_at", "google", negated=True)),
    ("es", "Dejé mi trabajo en Google.", S(U, "works_at", "google", negated=True)),
    ("es", "Trabajo como enfermera.", S(U, "job_title", "enfermera")),
    ("es", "Prefiero el té al café.", S(U, "prefers:drink", "te")),
    ("es", "Mi color favorito es el azul.", S(U, "favourite:colour", "azul")),
    ("es", "Me encantan los sushis.", S(U, "likes:sushis", "like")),
    ("es", "Ya no me gustan los sushis.", S(U, "likes:sushis", "dislike")),
    ("es", "El informe vence el viernes.", S(U, "due:informe", "friday")),
    ("es", "La fecha límite del informe es el lunes.", S(U, "due:informe", "monday")),
    ("es", "La reunión se movió al jueves.", S(U, "due:reunion", "thursday")),
    ("es", "Usamos Postgres 16.", S(U, "uses:db", "postgresql")),
    ("es", "Me cambié de vim a Emacs.", S(U, "uses:editor", "emacs")),
    ("es", "Decidimos usar Postgres para el backend.", S(U, "decision:db", "postgresql")),
    ("es", "Mi número es el 612 345 678.", S(U, "phone", "612345678")),
    ("es", "El teléfono de Ana es el 611 223 344.", S("ana", "phone", "611223344")),
    ("es", "Mi correo es ana@example.es.", S(U, "email", "ana@example.es")),
    ("es", "Estoy casada.", S(U, "relationship_status", "married")),
    ("es", "Me casé el año pasado.", S(U, "relationship_status", "married")),
    ("es", "Soy vegetariana.", S(U, "diet", "vegetarian")),
    ("es", "Tengo 34 años.", S(U, "age", "34")),
    ("es", "Mi perro se llama Rex.", S(U, "pet_name:dog", "rex")),
]

# (language, sentence) that state no slot: questions, hypotheticals, unknown referents,
# look-alikes ("I live for the weekends") and plain chat.
NOT_SLOTS: list[tuple[str, str]] = [
    ("en", "Do you live in Lyon?"),
    ("en", "Where do you work?"),
    ("en", "Are you married?"),
    ("en", "I live for the weekends."),
    ("en", "I live in fear."),
    ("en", "I live with my parents."),
    ("en", "I live in an apartment."),
    ("en", "I live near the beach."),
    ("en", "Anna moved the meeting."),
    ("en", "She lives in Paris."),
    ("en", "What if I moved to Berlin?"),
    ("en", "If I lived in Paris, I'd be happy."),
    ("en", "I wish I lived in Paris."),
    ("en", "I used to live in Paris."),
    ("en", "I work hard."),
    ("en", "I work from home."),
    ("en", "I work at night."),
    ("en", "I work at a startup."),
    ("en", "I'm working on a new project."),
    ("en", "I'm on vacation."),
    ("en", "I use my phone a lot."),
    ("en", "I run every morning."),
    ("en", "I'm 5 minutes late."),
    ("en", "I love you."),
    ("en", "I like to think so."),
    ("en", "My phone died."),
    ("en", "The weather is due to improve."),
    ("en", "One of my favourite foods is pizza."),
    ("en", "Thanks, that sounds great!"),
    ("ru", "Ты живёшь в Лионе?"),
    ("ru", "Где ты работаешь?"),
    ("ru", "Живёт в Москве."),
    ("ru", "Он живёт в Париже."),
    ("ru", "Я живу ради выходных."),
    ("ru", "Я живу с родителями."),
    ("ru", "Я живу в квартире."),
    ("ru", "Анна перенесла встречу."),
    ("ru", "Если бы я жил в Париже, я был бы счастлив."),
    ("ru", "Я работаю в офисе."),
    ("ru", "Я работаю удалённо."),
    ("ru", "Я много работаю."),
    ("ru", "Я люблю тебя."),
    ("ru", "Спасибо, отлично!"),
    ("fr", "Est-ce que tu habites à Lyon ?"),
    ("fr", "Habites-tu à Lyon"),
    ("fr", "Il habite à Paris."),
    ("fr", "Je vis pour les week-ends."),
    ("fr", "J'habite avec mes parents."),
    ("fr", "Anna a déplacé la réunion."),
    ("fr", "Et si je déménageais à Berlin ?"),
    ("fr", "Si j'habitais à Paris, je serais content."),
    ("fr", "Je travaille pour vivre."),
    ("fr", "Je travaille à la maison."),
    ("fr", "Je suis en vacances."),
    ("fr", "Je t'aime."),
    ("fr", "Merci beaucoup !"),
    ("es", "¿Vives en Lyon?"),
    ("es", "¿Dónde trabajas?"),
    ("es", "Vive en Madrid."),
    ("es", "Él vive en París."),
    ("es", "Vivo para los fines de semana."),
    ("es", "Vivo con mis padres."),
    ("es", "Ana movió la reunión."),
    ("es", "Si viviera en París, sería feliz."),
    ("es", "Trabajo en casa."),
    ("es", "Trabajo mucho."),
    ("es", "Estoy en Madrid."),
    ("es", "Te quiero."),
    ("es", "¡Muchas gracias!"),
]


def _id(case: tuple[str, str, Slot] | tuple[str, str]) -> str:
    return f"{case[0]}:{case[1]}"


@pytest.mark.parametrize("case", STATED, ids=_id)
def test_stated(case: tuple[str, str, Slot]) -> None:
    lang, text, expected = case
    assert slot_of(text, lang=lang) == expected


@pytest.mark.parametrize("case", STATED, ids=_id)
def test_stated_with_the_language_detected(case: tuple[str, str, Slot]) -> None:
    _, text, expected = case
    assert slot_of(text) == expected


@pytest.mark.parametrize("case", NOT_SLOTS, ids=_id)
def test_not_a_slot(case: tuple[str, str]) -> None:
    lang, text = case
    assert slot_of(text, lang=lang) is None
    assert slot_of(text) is None


REQUIRED = {"lives_in", "works_at", "prefers", "due", "uses", "phone", "email", "likes"}


@pytest.mark.parametrize("lang", ["en", "ru", "fr", "es"])
def test_every_language_covers_the_core_attributes(lang: str) -> None:
    covered = {slot.attribute.split(":")[0] for code, _, slot in STATED if code == lang}
    assert covered >= REQUIRED
    assert any(slot.hedged for code, _, slot in STATED if code == lang)
    assert any(slot.negated for code, _, slot in STATED if code == lang)


def test_a_versioned_tool_states_the_tool_and_its_version() -> None:
    assert slots_of("We use Postgres 16.", lang="en") == (
        S(U, "uses:db", "postgresql"),
        S(U, "version_of:postgresql", "16"),
    )
    assert slots_of("Мы перешли на PostgreSQL 17.", lang="ru")[1] == S(
        U, "version_of:postgresql", "17"
    )
    hedged = slots_of("We might upgrade to Postgres 17.", lang="en")
    assert [slot.hedged for slot in hedged] == [True, True]


def test_an_unknown_tool_yields_only_its_version() -> None:
    assert slots_of("We use Frobnicator 2.3.", lang="en") == (
        S(U, "version_of:frobnicator", "2.3"),
    )
    assert slots_of("We use Frobnicator.", lang="en") == ()


def test_the_speaker_is_the_subject() -> None:
    assert slot_of("I live in Paris.", speaker="Caroline") == S("caroline", "lives_in", "paris")
    assert slot_of("Caroline lives in Lyon.", speaker="Melanie") == S(
        "caroline", "lives_in", "lyon"
    )
    # Russian names lose their case ending, the speaker's too: "Анна", "Анны" -> "анн".
    assert slot_of("Я живу в Париже.", speaker="Анна") == S("анн", "lives_in", "париж")
    assert slot_of("Анна живёт в Лионе.") == S("анн", "lives_in", "лион")


def test_several_sentences_state_several_slots() -> None:
    found = slots_of("I live in Paris. I work at Google.", lang="en")
    assert [slot.attribute for slot in found] == ["lives_in", "works_at"]


def test_a_slot_remembers_what_was_said_without_comparing_it() -> None:
    slot = slot_of("Я живу в Париже.")
    assert slot is not None
    assert (slot.said, slot.rule) == ("Париже", "ru.lives_in")
    assert slot == Slot(U, "lives_in", "париж", said="elsewhere", rule="other")
    assert slot.key == (U, "lives_in")


def test_a_language_without_slot_patterns_yields_nothing() -> None:
    assert slots_of("Ich wohne in Berlin.", lang="de") == ()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Lyon, France", "lyon, france"),
        ("  LYON ", "lyon"),
        ("Québec", "quebec"),
        ("ｌｙｏｎ", "lyon"),
        ("в Париже", "париж"),
        ("в Санкт-Петербурге", "санкт петербург"),
        ("Postgres", "postgresql"),
        ("VS Code", "vscode"),
        ("the city of Paris", "paris"),
        ("le thé", "the"),
        ("vendredi", "friday"),
        ("пятницу", "friday"),
        ("LA", "la"),
    ],
)
def test_value_key(text: str, key: str) -> None:
    assert value_key(text) == key


def test_every_rule_names_a_known_attribute() -> None:
    book = load_slots()  # eager: every packaged file compiles
    assert book.codes == ("en", "es", "fr", "ru")
    for code in book.codes:
        language = book.language(code)
        assert language is not None
        for rule in language.rules:
            assert rule.attribute.split(":")[0] in ATTRIBUTES, rule.id


# --- the file format ---------------------------------------------------------------------

GOOD = """
[language]
code = "xx"
[macros]
who = '''i|we'''
[subjects]
self = ["i", "we"]
[[slot]]
id = "lives_in"
attribute = "lives_in"
pattern = '''\\b(?P<subject>{{who}})\\s+dwell\\s+in\\s+(?P<value>\\w+)'''
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_a_language_is_added_by_adding_a_file(tmp_path: Path) -> None:
    book = load_slots(_write(tmp_path / "slots", "xx.toml", GOOD))
    assert book.slots_of("We dwell in Arcadia.", lang="xx") == (S(U, "lives_in", "arcadia"),)


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("xx.toml", "not = [toml", "not valid TOML"),
        ("yy.toml", GOOD, "file is named"),
        ("xx.toml", GOOD.replace('attribute = "lives_in"', 'attribute = "shoe_size"'), "attribute"),
        ("xx.toml", GOOD.replace("(?P<value>", "(?P<place>"), "unknown named group"),
        ("xx.toml", GOOD.replace("(?P<value>\\w+)", "\\w+"), "(?P<value>...)"),
        ("xx.toml", GOOD.replace("{{who}}", "{{whom}}"), "unknown macro"),
        ("xx.toml", GOOD.replace("dwell", "dwell("), "bad regex"),
        ("xx.toml", GOOD + 'colour = "blue"\n', "unknown key"),
        ("xx.toml", GOOD.replace('id = "lives_in"', 'id = "Lives In"'), "snake_case"),
    ],
)
def test_a_malformed_file_names_itself(tmp_path: Path, name: str, text: str, message: str) -> None:
    folder = _write(tmp_path / "slots", name, text)
    with pytest.raises(SlotFileError, match="xx.toml|yy.toml") as error:
        load_slots(folder)
    assert message in str(error.value)


def test_a_folder_without_language_files_is_refused(tmp_path: Path) -> None:
    folder = _write(tmp_path / "slots", "values.toml", "[aliases]\nx = ['y']\n")
    with pytest.raises(SlotFileError, match="no <lang>.toml"):
        load_slots(folder)
