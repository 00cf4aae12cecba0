"""Lifecycle by meaning, the pure part: which report finishes which task, what a change of
plan is, what a "forget …" describes — in EN/RU/FR/ES, from the slot files' words."""

from __future__ import annotations

import pytest

from memoracle.lifecycle.meaning import (
    change_of_plan,
    described,
    meaning_words,
    meet,
    reports_done,
    words_from,
)
from memoracle.lifecycle.slots.model import SlotFileError


@pytest.mark.parametrize(
    ("task", "report"),
    [
        ("I need to finish the tax return by Friday.", "I finished the tax return."),
        ("I have to renew my passport.", "Passport renewal is done."),
        ("Мне нужно сдать отчёт до пятницы.", "Я сдал отчёт."),
        ("Надо починить велосипед.", "Велосипед починил."),
        ("Je dois faire la déclaration d'impôts.", "J'ai fini la déclaration d'impôts."),
        ("Tengo que terminar el informe trimestral.", "Ya terminé el informe trimestral."),
        ("Necesito llamar al fontanero.", "Ya llamé al fontanero."),
        ("Tengo que pagar el alquiler.", "Pagué el alquiler."),
        ("TODO: update the README.", "The README is updated."),
    ],
)
def test_a_report_in_other_words_finishes_its_task(task: str, report: str) -> None:
    assert reports_done(task, report)


@pytest.mark.parametrize(
    ("task", "report"),
    [
        ("I need to call the bank.", "I called the plumber."),  # another task, one verb
        ("I need to finish the tax return.", "I haven't finished the tax return yet."),
        ("Tengo que terminar el informe.", "No terminé el informe."),
        ("Мне нужно сдать отчёт.", "Я ещё не сдал отчёт."),
        ("I need to renew my passport.", "I renewed my gym membership."),
        (  # a long turn passing by
            "Remember to find joy in the little things.",
            "It's often those little moments that make the biggest difference. Keep finding"
            " those bright spots, and the little things will follow.",
        ),
    ],
)
def test_another_task_or_a_denial_finishes_nothing(task: str, report: str) -> None:
    assert not reports_done(task, report)


def test_stems_meet_on_a_word_s_forms_not_on_a_shared_start() -> None:
    assert meet("llama", "llame") and meet("сдат", "сдал") and meet("work", "works")
    assert not meet("bank", "plumb") and not meet("ex", "exam")
    assert meet("pagar", "pague", loose=True) and not meet("pagar", "pague")


@pytest.mark.parametrize(
    "text",
    [
        "Change of plans — we'll host on Cloudflare Pages instead.",
        "The meeting was moved to Thursday.",
        "Передумали, пишем на Kotlin.",
        "Встречу перенесли на пятницу.",
        "Finalement on part en Grèce.",
        "Al final iremos a Marruecos.",
    ],
)
def test_a_change_of_plan_is_read_in_four_languages(text: str) -> None:
    assert change_of_plan(text)


def test_a_plain_plan_is_no_change() -> None:
    assert not change_of_plan("We'll deploy on Vercel.")
    assert not change_of_plan("Мы будем деплоить на Heroku.")
    assert not change_of_plan("We moved to a new flat.")  # a move, not a new date
    assert not change_of_plan("Теперь я живу в Праге.")  # "now" alone changes no plan


@pytest.mark.parametrize(
    ("description", "text"),
    [
        ("my old job", "I work at Oracle as a DBA."),
        ("мою работу", "Я работаю в Мегафоне."),
        ("lo de mi trabajo", "Trabajo en Iberdrola."),
        ("я говорила про бывшего", "Мой бывший — Игорь."),
        ("mon ex", "My ex is Jake."),  # another language than the memory's
        ("the gym", "My gym is Iron Temple on Baker Street."),
    ],
)
def test_a_description_finds_what_it_means(description: str, text: str) -> None:
    hit, wanted = described(description, text)
    assert wanted and hit == wanted


def test_a_description_does_not_find_what_it_does_not_mean() -> None:
    assert described("my old job", "I like sushi.")[0] == 0
    assert described("the locker code", "My locker is number 12.") == (1, 2)


def test_the_words_come_from_the_slot_files_and_a_bad_table_is_named() -> None:
    words = meaning_words()
    assert "need" in words.modal and "передумали" in words.change
    assert "traba" in words.topics["job"] and "работ" in words.topics["work"]  # stems
    extra = words_from([({"topics": {"car": ["car", "voiture", "машина"]}}, "x.toml")])
    assert extra.topics["car"] == extra.topics["voitu"]
    with pytest.raises(SlotFileError, match=r"x\.toml.*\[meaning\]"):
        words_from([({"dones": ["ok"]}, "x.toml")])
    with pytest.raises(SlotFileError, match=r"x\.toml"):
        words_from([({"done": [3]}, "x.toml")])


@pytest.mark.parametrize(
    ("description", "text"),
    [
        # The reported cases: a prefix of another language's topic word is no match.
        ("chat", "Change of plans — we'll use MySQL 8 for the backend."),
        ("chat", "I charged my laptop."),
        ("gato", "The gate code is 4521."),
        ("mon chat", "I charged my laptop."),
        ("mi gato", "The gate code is 4521."),
        # Nor a prefix in the memory's own language.
        ("my work", "I did a workout at the gym."),
        ("mi casa", "I cashed the check yesterday."),
        ("про кота", "Котлеты были вкусные."),
        ("про мой телефон", "Телевизор сломался."),
        ("про мою машину", "Машинист опоздал."),
    ],
)
def test_a_description_never_matches_a_prefix(description: str, text: str) -> None:
    assert described(description, text)[0] == 0


@pytest.mark.parametrize(
    ("description", "text"),
    [
        # Each language's description finds a memory in each other language by topic.
        ("mon chat", "I have a cat named Felix."),
        ("mi gato", "I have a cat named Felix."),
        ("мою кошку", "I have a cat named Felix."),
        ("my cat", "J'ai un chat qui s'appelle Felix."),
        ("mi gato", "J'ai un chat qui s'appelle Felix."),
        ("мою кошку", "J'ai un chat qui s'appelle Felix."),
        ("my cat", "Tengo un gato que se llama Michi."),
        ("mon chat", "Tengo un gato que se llama Michi."),
        ("мою кошку", "Tengo un gato que se llama Michi."),
        ("my cat", "У меня кошка Мурка."),
        ("mon chat", "У меня кошка Мурка."),
        ("mi gato", "У меня кошка Мурка."),
        # And in its own language by stem.
        ("my dogs", "My dog is called Toby."),
        ("mes chats", "Mon chat s'appelle Felix."),
        ("mis perros", "Mi perro se llama Toby."),
        ("мою собаку", "У меня собака Шарик."),
    ],
)
def test_a_description_finds_its_topic_in_every_language(description: str, text: str) -> None:
    hit, wanted = described(description, text)
    assert wanted and hit == wanted
