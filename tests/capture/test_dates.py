"""find_dates: relative and absolute time expressions in four languages, resolved against
a fixed anchor, plus the words that must not become dates and the time words files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from importlib import resources

import pytest

from memoracle.capture.dates import find_dates, parse_timewords
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Turn

# Monday 2023-05-08 13:56 UTC; the same instant at UTC+11 is Tuesday 2023-05-09 00:56.
ANCHOR = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
PLUS11 = timezone(timedelta(hours=11))
LATE = ANCHOR.astimezone(PLUS11)


def _at(spec: str, tz: tzinfo) -> datetime:
    return datetime.fromisoformat(spec).replace(tzinfo=tz)


# (lang, text, mention, start, end, granularity): start/end in the anchor's timezone.
RESOLVED = [
    # English
    ("en", "I saw her yesterday.", "yesterday", "2023-05-07", "2023-05-08", "day"),
    ("en", "See you tomorrow!", "tomorrow", "2023-05-09", "2023-05-10", "day"),
    ("en", "Today is busy", "Today", "2023-05-08", "2023-05-09", "day"),
    (
        "en",
        "the day before yesterday",
        "the day before yesterday",
        "2023-05-06",
        "2023-05-07",
        "day",
    ),
    (
        "en",
        "come the day after tomorrow",
        "the day after tomorrow",
        "2023-05-10",
        "2023-05-11",
        "day",
    ),
    ("en", "It broke 3 days ago.", "3 days ago", "2023-05-05", "2023-05-06", "day"),
    ("en", "a few days ago", "a few days ago", "2023-05-05", "2023-05-06", "day"),
    ("en", "a couple of weeks ago", "a couple of weeks ago", "2023-04-24", "2023-04-25", "day"),
    ("en", "due in two weeks", "in two weeks", "2023-05-22", "2023-05-23", "day"),
    ("en", "in 3 days", "in 3 days", "2023-05-11", "2023-05-12", "day"),
    ("en", "two days from now", "two days from now", "2023-05-10", "2023-05-11", "day"),
    ("en", "twelve days later", "twelve days later", "2023-05-20", "2023-05-21", "day"),
    ("en", "3 months ago", "3 months ago", "2023-02-01", "2023-03-01", "month"),
    ("en", "in a year", "in a year", "2024-01-01", "2025-01-01", "year"),
    ("en", "2 hours ago", "2 hours ago", "2023-05-08T11:00", "2023-05-08T12:00", "time"),
    ("en", "last Friday", "last Friday", "2023-05-05", "2023-05-06", "day"),
    ("en", "next Friday", "next Friday", "2023-05-19", "2023-05-20", "day"),
    ("en", "this Friday", "this Friday", "2023-05-12", "2023-05-13", "day"),
    ("en", "next Tue", "next Tue", "2023-05-16", "2023-05-17", "day"),
    ("en", "this coming Tuesday", "this coming Tuesday", "2023-05-09", "2023-05-10", "day"),
    ("en", "We went there on Friday", "on Friday", "2023-05-05", "2023-05-06", "day"),
    ("en", "I will go there on Friday", "on Friday", "2023-05-12", "2023-05-13", "day"),
    ("en", "Let's meet Friday", "Friday", "2023-05-12", "2023-05-13", "day"),
    ("en", "this week", "this week", "2023-05-08", "2023-05-15", "week"),
    ("en", "last week", "last week", "2023-05-01", "2023-05-08", "week"),
    ("en", "next week", "next week", "2023-05-15", "2023-05-22", "week"),
    ("en", "the week before last", "the week before last", "2023-04-24", "2023-05-01", "week"),
    ("en", "next month", "next month", "2023-06-01", "2023-07-01", "month"),
    ("en", "last year", "last year", "2022-01-01", "2023-01-01", "year"),
    ("en", "this morning", "this morning", "2023-05-08T06:00", "2023-05-08T12:00", "part_of_day"),
    (
        "en",
        "this afternoon",
        "this afternoon",
        "2023-05-08T12:00",
        "2023-05-08T18:00",
        "part_of_day",
    ),
    ("en", "this evening", "this evening", "2023-05-08T18:00", "2023-05-09T00:00", "part_of_day"),
    ("en", "tonight", "tonight", "2023-05-08T18:00", "2023-05-09T06:00", "part_of_day"),
    ("en", "last night", "last night", "2023-05-07T18:00", "2023-05-08T06:00", "part_of_day"),
    ("en", "Friday night", "Friday night", "2023-05-12T18:00", "2023-05-13T06:00", "part_of_day"),
    (
        "en",
        "call me tomorrow at 5",
        "tomorrow at 5",
        "2023-05-09T17:00",
        "2023-05-09T18:00",
        "time",
    ),
    ("en", "at 5pm", "at 5pm", "2023-05-08T17:00", "2023-05-08T18:00", "time"),
    ("en", "at 9 tomorrow", "at 9 tomorrow", "2023-05-09T09:00", "2023-05-09T10:00", "time"),
    ("en", "tonight at 11", "tonight at 11", "2023-05-08T23:00", "2023-05-09T00:00", "time"),
    (
        "en",
        "tomorrow morning at 9:30",
        "tomorrow morning at 9:30",
        "2023-05-09T09:30",
        "2023-05-09T09:31",
        "time",
    ),
    ("en", "on 2023-05-08", "2023-05-08", "2023-05-08", "2023-05-09", "day"),
    ("en", "2023-05-08T14:30", "2023-05-08T14:30", "2023-05-08T14:30", "2023-05-08T14:31", "time"),
    ("en", "on 8 May 2023", "on 8 May 2023", "2023-05-08", "2023-05-09", "day"),
    ("en", "8th May 2023", "8th May 2023", "2023-05-08", "2023-05-09", "day"),
    ("en", "May 8th, 2023", "May 8th, 2023", "2023-05-08", "2023-05-09", "day"),
    ("en", "May 8", "May 8", "2023-05-08", "2023-05-09", "day"),
    ("en", "the 1st of June", "the 1st of June", "2023-06-01", "2023-06-02", "day"),
    (
        "en",
        "Monday, May 8 at 3pm",
        "Monday, May 8 at 3pm",
        "2023-05-08T15:00",
        "2023-05-08T16:00",
        "time",
    ),
    ("en", "08.05.2023", "08.05.2023", "2023-05-08", "2023-05-09", "day"),
    ("en", "8/5/2023", "8/5/2023", "2023-05-08", "2023-05-09", "day"),
    ("en", "8/5/23", "8/5/23", "2023-05-08", "2023-05-09", "day"),
    ("en", "13/05/2023", "13/05/2023", "2023-05-13", "2023-05-14", "day"),
    ("en", "in May", "in May", "2023-05-01", "2023-06-01", "month"),
    ("en", "last March", "last March", "2023-03-01", "2023-04-01", "month"),
    ("en", "May 2023", "May 2023", "2023-05-01", "2023-06-01", "month"),
    ("en", "Sept 2021", "Sept 2021", "2021-09-01", "2021-10-01", "month"),
    ("en", "in 2021", "in 2021", "2021-01-01", "2022-01-01", "year"),
    ("en", "since 2021", "2021", "2021-01-01", "2022-01-01", "year"),
    # Russian
    ("ru", "вчера", "вчера", "2023-05-07", "2023-05-08", "day"),
    ("ru", "Это было позавчера", "позавчера", "2023-05-06", "2023-05-07", "day"),
    ("ru", "послезавтра", "послезавтра", "2023-05-10", "2023-05-11", "day"),
    ("ru", "через две недели", "через две недели", "2023-05-22", "2023-05-23", "day"),
    ("ru", "на прошлой неделе", "на прошлой неделе", "2023-05-01", "2023-05-08", "week"),
    ("ru", "на этой неделе", "на этой неделе", "2023-05-08", "2023-05-15", "week"),
    ("ru", "в прошлую пятницу", "в прошлую пятницу", "2023-05-05", "2023-05-06", "day"),
    ("ru", "Созвонимся в пятницу", "в пятницу", "2023-05-12", "2023-05-13", "day"),
    ("ru", "В пятницу мы ходили в кино", "В пятницу", "2023-05-05", "2023-05-06", "day"),
    ("ru", "3 дня назад", "3 дня назад", "2023-05-05", "2023-05-06", "day"),
    ("ru", "неделю назад", "неделю назад", "2023-05-01", "2023-05-02", "day"),
    ("ru", "пару дней назад", "пару дней назад", "2023-05-06", "2023-05-07", "day"),
    ("ru", "через месяц", "через месяц", "2023-06-01", "2023-07-01", "month"),
    ("ru", "в следующем месяце", "в следующем месяце", "2023-06-01", "2023-07-01", "month"),
    ("ru", "в прошлом году", "в прошлом году", "2022-01-01", "2023-01-01", "year"),
    ("ru", "вчера вечером", "вчера вечером", "2023-05-07T18:00", "2023-05-08T00:00", "part_of_day"),
    ("ru", "сегодня утром", "сегодня утром", "2023-05-08T06:00", "2023-05-08T12:00", "part_of_day"),
    ("ru", "в 5 вечера", "в 5 вечера", "2023-05-08T17:00", "2023-05-08T18:00", "time"),
    ("ru", "завтра в 5", "завтра в 5", "2023-05-09T17:00", "2023-05-09T18:00", "time"),
    ("ru", "8 мая 2023 года", "8 мая 2023 года", "2023-05-08", "2023-05-09", "day"),
    ("ru", "в мае 2023", "в мае 2023", "2023-05-01", "2023-06-01", "month"),
    ("ru", "в мае", "в мае", "2023-05-01", "2023-06-01", "month"),
    ("ru", "в 2021 году", "в 2021 году", "2021-01-01", "2022-01-01", "year"),
    # French
    ("fr", "hier", "hier", "2023-05-07", "2023-05-08", "day"),
    ("fr", "avant-hier", "avant-hier", "2023-05-06", "2023-05-07", "day"),
    ("fr", "après-demain", "après-demain", "2023-05-10", "2023-05-11", "day"),
    ("fr", "aujourd'hui", "aujourd'hui", "2023-05-08", "2023-05-09", "day"),
    ("fr", "la semaine dernière", "la semaine dernière", "2023-05-01", "2023-05-08", "week"),
    ("fr", "il y a trois jours", "il y a trois jours", "2023-05-05", "2023-05-06", "day"),
    ("fr", "vendredi dernier", "vendredi dernier", "2023-05-05", "2023-05-06", "day"),
    ("fr", "mardi prochain", "mardi prochain", "2023-05-09", "2023-05-10", "day"),
    ("fr", "dans deux semaines", "dans deux semaines", "2023-05-22", "2023-05-23", "day"),
    ("fr", "le mois prochain", "le mois prochain", "2023-06-01", "2023-07-01", "month"),
    ("fr", "ce mois-ci", "ce mois-ci", "2023-05-01", "2023-06-01", "month"),
    ("fr", "l'année dernière", "l'année dernière", "2022-01-01", "2023-01-01", "year"),
    ("fr", "ce matin", "ce matin", "2023-05-08T06:00", "2023-05-08T12:00", "part_of_day"),
    ("fr", "ce soir", "ce soir", "2023-05-08T18:00", "2023-05-09T00:00", "part_of_day"),
    ("fr", "hier soir", "hier soir", "2023-05-07T18:00", "2023-05-08T00:00", "part_of_day"),
    ("fr", "demain à 17h", "demain à 17h", "2023-05-09T17:00", "2023-05-09T18:00", "time"),
    ("fr", "à 17h30", "à 17h30", "2023-05-08T17:30", "2023-05-08T17:31", "time"),
    ("fr", "le 8 mai 2023", "le 8 mai 2023", "2023-05-08", "2023-05-09", "day"),
    ("fr", "le 1er mai", "le 1er mai", "2023-05-01", "2023-05-02", "day"),
    ("fr", "en mai 2023", "en mai 2023", "2023-05-01", "2023-06-01", "month"),
    ("fr", "en mai", "en mai", "2023-05-01", "2023-06-01", "month"),
    ("fr", "J'ai vu Paul vendredi", "vendredi", "2023-05-05", "2023-05-06", "day"),
    ("fr", "On se voit vendredi", "vendredi", "2023-05-12", "2023-05-13", "day"),
    # Spanish
    ("es", "ayer", "ayer", "2023-05-07", "2023-05-08", "day"),
    ("es", "anteayer", "anteayer", "2023-05-06", "2023-05-07", "day"),
    ("es", "pasado mañana", "pasado mañana", "2023-05-10", "2023-05-11", "day"),
    ("es", "el mes pasado", "el mes pasado", "2023-04-01", "2023-05-01", "month"),
    ("es", "hace dos días", "hace dos días", "2023-05-06", "2023-05-07", "day"),
    ("es", "hace unos días", "hace unos días", "2023-05-05", "2023-05-06", "day"),
    ("es", "el viernes pasado", "el viernes pasado", "2023-05-05", "2023-05-06", "day"),
    ("es", "el próximo viernes", "el próximo viernes", "2023-05-12", "2023-05-13", "day"),
    ("es", "El viernes fuimos al cine", "El viernes", "2023-05-05", "2023-05-06", "day"),
    ("es", "la próxima semana", "la próxima semana", "2023-05-15", "2023-05-22", "week"),
    ("es", "la semana que viene", "la semana que viene", "2023-05-15", "2023-05-22", "week"),
    ("es", "dentro de 3 días", "dentro de 3 días", "2023-05-11", "2023-05-12", "day"),
    ("es", "el año pasado", "el año pasado", "2022-01-01", "2023-01-01", "year"),
    ("es", "esta mañana", "esta mañana", "2023-05-08T06:00", "2023-05-08T12:00", "part_of_day"),
    ("es", "esta noche", "esta noche", "2023-05-08T18:00", "2023-05-09T06:00", "part_of_day"),
    ("es", "anoche", "anoche", "2023-05-07T18:00", "2023-05-08T06:00", "part_of_day"),
    (
        "es",
        "mañana por la mañana",
        "mañana por la mañana",
        "2023-05-09T06:00",
        "2023-05-09T12:00",
        "part_of_day",
    ),
    (
        "es",
        "ayer por la tarde",
        "ayer por la tarde",
        "2023-05-07T12:00",
        "2023-05-07T18:00",
        "part_of_day",
    ),
    ("es", "a las 5", "a las 5", "2023-05-08T17:00", "2023-05-08T18:00", "time"),
    ("es", "mañana a las 5", "mañana a las 5", "2023-05-09T17:00", "2023-05-09T18:00", "time"),
    ("es", "8 de mayo de 2023", "8 de mayo de 2023", "2023-05-08", "2023-05-09", "day"),
    ("es", "en mayo", "en mayo", "2023-05-01", "2023-06-01", "month"),
]


@pytest.mark.parametrize(("lang", "text", "mention", "start", "end", "granularity"), RESOLVED)
def test_resolves_against_the_anchor(
    lang: str, text: str, mention: str, start: str, end: str, granularity: str
) -> None:
    [found] = find_dates(text, ANCHOR, lang)
    assert (found.text, found.start, found.end, found.granularity) == (
        mention,
        _at(start, UTC),
        _at(end, UTC),
        granularity,
    )
    assert text[found.span[0] : found.span[1]] == found.text


# The anchor at UTC+11 is already Tuesday 00:56 there: "today" is the local day.
RESOLVED_LATE = [
    ("en", "yesterday", "2023-05-08", "2023-05-09", "day"),
    ("en", "tomorrow at 5", "2023-05-10T17:00", "2023-05-10T18:00", "time"),
    ("en", "last Friday", "2023-05-05", "2023-05-06", "day"),
    ("en", "this week", "2023-05-08", "2023-05-15", "week"),
    ("en", "tonight", "2023-05-08T18:00", "2023-05-09T06:00", "part_of_day"),
    ("ru", "вчера", "2023-05-08", "2023-05-09", "day"),
    ("fr", "il y a 3 jours", "2023-05-06", "2023-05-07", "day"),
    ("es", "hace 3 días", "2023-05-06", "2023-05-07", "day"),
]


@pytest.mark.parametrize(("lang", "text", "start", "end", "granularity"), RESOLVED_LATE)
def test_resolves_in_the_anchors_timezone(
    lang: str, text: str, start: str, end: str, granularity: str
) -> None:
    [found] = find_dates(text, LATE, lang)
    assert (found.start, found.end, found.granularity) == (
        _at(start, PLUS11),
        _at(end, PLUS11),
        granularity,
    )
    assert found.start.utcoffset() == timedelta(hours=11)


NOT_DATES = [
    ("en", "May I ask you something?"),
    ("en", "I may be late"),
    ("en", "Will you help me?"),
    ("en", "We will march on the capital"),
    ("en", "I sat down and relaxed"),
    ("en", "I rated it 8/5"),
    ("en", "upgrade to version 1.2.3"),
    ("en", "I have 3 days of vacation left"),
    ("en", "every Friday I swim"),
    ("en", "the sun is up"),
    ("en", "meet at 5 people"),
    ("en", "ping 192.168.1.10"),
    ("ru", "Май — хороший месяц"),
    ("ru", "Мне нужно 3 дня на это"),
    ("ru", "Я работал 5 часов"),
    ("ru", "каждую пятницу я плаваю"),
    ("ru", "счёт 8/5"),
    ("fr", "Mars est une planète"),
    ("fr", "il a 3h de retard"),
    ("fr", "il y a deux semaines de vacances"),
    ("fr", "J'ai deux semaines de congé"),
    ("fr", "chaque vendredi je nage"),
    ("es", "Tengo dos días libres"),
    ("es", "llegué tarde"),
    ("es", "el mar está en calma"),
    ("es", "los viernes juego al fútbol"),
    ("es", "hace calor"),
]


# A day of the month without its month, in the forms each language says it.
NOT_DATES += [
    ("en", "the 17th century"),
    ("en", "my 17th birthday"),
    ("en", "on the 3rd floor"),
    ("en", "the 17 of them"),
    ("en", "a goal in the 17th."),
    ("en", "the 17th-century church"),
    ("ru", "17-го века"),
    ("ru", "с 5-го этажа"),
    ("ru", "в 17-м веке"),
    ("fr", "J'habite dans le 17."),
    ("fr", "le 17 rue Lafayette"),
    ("fr", "au 17e siècle"),
    ("es", "vivo en el 17"),
    ("es", "el 17% de los votos"),
    ("es", "cuesta el 17€"),
    ("fr", "le 17.5 est sorti"),
    ("es", "el 17 de cada mes"),
]


@pytest.mark.parametrize(("lang", "text"), NOT_DATES)
def test_ordinary_words_are_not_dates(lang: str, text: str) -> None:
    assert find_dates(text, ANCHOR, lang) == []


@pytest.mark.parametrize(
    ("text", "lang", "rule"),
    [
        ("yesterday", "en", "en.relative_day"),
        ("3 дня назад", "ru", "ru.n_units_ago"),
        ("dans 3 jours", "fr", "fr.in_n_units"),
        ("2023-05-08", "es", "abs.iso"),
        ("8/5/2023", "ru", "abs.numeric"),
        ("tomorrow at 5", "en", "en.relative_day+en.time"),
    ],
)
def test_rule_names_what_fired(text: str, lang: str, rule: str) -> None:
    assert [d.rule for d in find_dates(text, ANCHOR, lang)] == [rule]


@pytest.mark.parametrize(
    ("lang", "text", "day"),
    [
        ("en", "last Monday", "2023-05-01"),  # Monday of last week
        ("ru", "в прошлый понедельник", "2023-05-01"),
        ("fr", "lundi dernier", "2023-05-08"),  # the latest Monday
        ("es", "el lunes pasado", "2023-05-08"),
        ("en", "this past Monday", "2023-05-08"),
    ],
)
def test_last_weekday_follows_the_languages_reading(lang: str, text: str, day: str) -> None:
    friday = datetime(2023, 5, 12, 9, 0, tzinfo=UTC)
    [found] = find_dates(text, friday, lang)
    assert found.start == _at(day, UTC)


def test_day_first_false_reads_month_first() -> None:
    [found] = find_dates("8/5/2023", ANCHOR, "en", day_first=False)
    assert found.start == _at("2023-08-05", UTC)


def test_impossible_reading_swaps() -> None:
    [found] = find_dates("13/05/2023", ANCHOR, "en", day_first=False)
    assert found.start == _at("2023-05-13", UTC)


def test_mentions_are_in_text_order_and_do_not_overlap() -> None:
    found = find_dates("On 8 May 2023 I left; 3 days ago I came back, in May.", ANCHOR, "en")
    assert [d.text for d in found] == ["On 8 May 2023", "3 days ago", "in May"]
    assert all(a.span[1] <= b.span[0] for a, b in zip(found, found[1:], strict=False))


def test_unknown_language_falls_back_to_english_and_numbers() -> None:
    found = find_dates("gestern, also yesterday, am 2023-05-07", ANCHOR, "de")
    assert [(d.text, d.rule) for d in found] == [
        ("yesterday", "en.relative_day"),
        ("2023-05-07", "abs.iso"),
    ]


def test_region_tags_use_the_language() -> None:
    assert [d.rule for d in find_dates("demain", ANCHOR, "fr-CA")] == ["fr.relative_day"]


def test_tonight_after_midnight_is_the_night_under_way() -> None:
    late = datetime(2023, 5, 9, 2, 0, tzinfo=UTC)
    [found] = find_dates("tonight", late, "en")
    assert (found.start, found.end) == (_at("2023-05-08T18:00", UTC), _at("2023-05-09T06:00", UTC))


def test_nearest_tense_cue_wins() -> None:
    [found] = find_dates("I'll tell you what happened on Friday", ANCHOR, "en")
    assert found.start == _at("2023-05-05", UTC)


@pytest.mark.parametrize(
    ("lang", "text", "day"),
    [
        # A change of date or a plan: ahead, whatever the tense around it.
        ("en", "The meeting moved to Thursday.", "2023-05-18"),
        ("en", "The meeting was moved to Thursday.", "2023-05-18"),
        ("en", "We pushed the deploy to Thursday.", "2023-05-18"),
        ("en", "I was sick, but the meeting is on Thursday.", "2023-05-18"),
        ("ru", "Встречу перенесли на четверг.", "2023-05-18"),
        ("ru", "Встреча перенесена на четверг.", "2023-05-18"),
        ("ru", "Я болел, но встреча будет в четверг.", "2023-05-18"),
        ("fr", "La réunion a été déplacée à jeudi.", "2023-05-18"),
        ("fr", "On a déplacé la réunion à jeudi.", "2023-05-18"),
        ("fr", "J'étais malade, mais la réunion est jeudi.", "2023-05-18"),
        ("es", "La reunión se movió al jueves.", "2023-05-18"),
        ("es", "Cambiaron la reunión al jueves.", "2023-05-18"),
        ("es", "Estuve enfermo, pero la reunión es el jueves.", "2023-05-18"),
        # Past tense with no change of date: behind.
        ("en", "I saw him on Thursday.", "2023-05-11"),
        ("en", "I moved on Thursday.", "2023-05-11"),  # the day of the move
        ("en", "I moved to Lyon on Thursday.", "2023-05-11"),
        ("ru", "Я видел его в четверг.", "2023-05-11"),
        ("ru", "Я переехал в четверг.", "2023-05-11"),
        ("fr", "Je l'ai vu jeudi.", "2023-05-11"),
        ("fr", "Je suis parti jeudi.", "2023-05-11"),
        ("es", "Lo vi el jueves.", "2023-05-11"),
        ("es", "La reunión se movió el jueves.", "2023-05-11"),  # moved on that day
    ],
)
def test_a_change_of_date_points_a_bare_weekday_ahead(lang: str, text: str, day: str) -> None:
    friday = datetime(2023, 5, 12, 9, 0, tzinfo=UTC)
    [found] = find_dates(text, friday, lang)
    assert found.start == _at(day, UTC)


def test_text_without_dates_is_empty() -> None:
    assert find_dates("Please refactor the parser to handle nested lists.", ANCHOR, "en") == []


# --- time words files -------------------------------------------------------------------

LANGS = ("en", "ru", "fr", "es")


def _source(lang: str) -> str:
    folder = resources.files("memoracle.language") / "rules" / "timewords"
    return (folder / f"{lang}.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", LANGS)
def test_each_language_file_is_valid(lang: str) -> None:
    words = parse_timewords(_source(lang), f"{lang}.toml")
    assert words.lang == lang
    assert sorted(set(words.months.values())) == list(range(1, 13))
    assert sorted(set(words.weekdays.values())) == list(range(7))


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("yesterday = -1", 'yesterday = "minus one"', "relative_days.yesterday"),
        ('monday = ["monday"]', "", "weekdays.monday"),
        ("bare_unit = false", 'bare_unit = "no"', "shift.bare_unit"),
        ('past_patterns = ["\\\\w{2,}ed"]', 'past_patterns = ["(unclosed"]', "tense.past_patterns"),
        ('lang = "en"', 'lang = "en"\nlanguage = "English"', "language"),
        ('calendar_week = ["next"', 'calendar_week = ["nxt"', "modifiers.calendar_week"),
        ('tonight = { day = 0, part = "night" }', 'tonight = { day = 0, part = "dusk" }', "part"),
        ("ordinal = true", 'ordinal = "yes"', "day_of_month.ordinal"),
        ('not_after = ["in"]', "", "day_of_month.not_after"),
    ],
)
def test_malformed_file_names_file_and_key(old: str, new: str, key: str) -> None:
    source = _source("en")
    assert old in source
    with pytest.raises(InvalidInput, match=rf"broken\.toml.*'[^']*{key}'"):
        parse_timewords(source.replace(old, new, 1), "broken.toml")


def test_invalid_toml_names_the_file() -> None:
    with pytest.raises(InvalidInput, match=r"broken\.toml.*not valid TOML"):
        parse_timewords("lang = ", "broken.toml")


# --- a day of the month without its month ------------------------------------------------

# (lang, text, said on, mention, day): the next such day on or after the day it was said,
# skipping months that lack it.
DAY_OF_MONTH = [
    ("en", "The report is due on the 17th.", "2025-11-03", "on the 17th", "2025-11-17"),
    ("en", "The report is due on the 17th.", "2025-11-20", "on the 17th", "2025-12-17"),
    ("en", "It's on the 31st.", "2025-01-31", "on the 31st", "2025-01-31"),
    ("en", "Pay rent by the 31st", "2025-04-05", "the 31st", "2025-05-31"),
    ("en", "the 29th", "2025-01-30", "the 29th", "2025-03-29"),
    ("en", "the 29th", "2024-01-30", "the 29th", "2024-02-29"),
    ("en", "Back on the 1st, ok?", "2025-12-31", "on the 1st", "2026-01-01"),
    ("en", "due on 17th and not later", "2025-11-03", "on 17th", "2025-11-17"),
    ("ru", "Отчёт нужно сдать 17-го.", "2025-11-03", "17-го", "2025-11-17"),
    ("ru", "Сдать отчёт к 17-му числу", "2025-11-20", "17-му числу", "2025-12-17"),
    ("ru", "Платёж 31 числа", "2025-04-05", "31 числа", "2025-05-31"),
    ("ru", "Созвон 31-го", "2025-01-31", "31-го", "2025-01-31"),
    ("fr", "Le rapport est à rendre le 17.", "2025-11-03", "le 17", "2025-11-17"),
    ("fr", "Le loyer est dû le 31", "2025-04-05", "le 31", "2025-05-31"),
    ("fr", "On se voit le 1er et on en parle.", "2025-11-20", "le 1er", "2025-12-01"),
    ("es", "El informe vence el 17.", "2025-11-03", "el 17", "2025-11-17"),
    ("es", "Pago el día 31", "2025-04-05", "el día 31", "2025-05-31"),
    ("es", "Nos vemos el 17, ¿vale?", "2025-11-20", "el 17", "2025-12-17"),
]


@pytest.mark.parametrize(("lang", "text", "said", "mention", "day"), DAY_OF_MONTH)
def test_a_day_of_the_month_alone_is_the_next_such_day(
    lang: str, text: str, said: str, mention: str, day: str
) -> None:
    [found] = find_dates(text, _at(f"{said}T10:00", UTC), lang)
    assert (found.text, found.start, found.end, found.granularity) == (
        mention,
        _at(day, UTC),
        _at(day, UTC) + timedelta(days=1),
        "day",
    )
    assert found.rule == f"{lang}.day_of_month"


@pytest.mark.parametrize(
    ("lang", "text", "start"),
    [
        ("en", "on the 17th at 5pm", "2023-05-17T17:00"),
        ("ru", "17-го в 15:00", "2023-05-17T15:00"),
        ("fr", "le 17 à 15h", "2023-05-17T15:00"),
        ("es", "el día 17 a las 5", "2023-05-17T17:00"),
        ("en", "Friday the 13th", "2023-10-13T00:00"),  # the next 13th that is a Friday
    ],
)
def test_a_day_of_the_month_joins_a_time_or_a_weekday(lang: str, text: str, start: str) -> None:
    [found] = find_dates(text, ANCHOR, lang)
    assert (found.text, found.start) == (text, _at(start, UTC))


@pytest.mark.parametrize(
    ("lang", "text", "due"),
    [
        ("en", "The report is due on the 17th.", "2025-11-17"),
        ("ru", "Отчёт нужно сдать 17-го.", "2025-11-17"),
        ("fr", "Le rapport est à rendre le 17.", "2025-11-17"),
        ("es", "El informe vence el 17.", "2025-11-17"),
    ],
)
def test_a_task_due_on_a_day_of_the_month_gets_that_due_date(
    engine: Engine, lang: str, text: str, due: str
) -> None:
    result = engine.capture([Turn("user", text, _at("2025-11-03T10:00", UTC))])
    [task] = result.added
    assert (task.kind, task.lang, task.due_at) == ("task", lang, _at(due, UTC))
