"""Capture by meaning: statements no template matches are kept when they say something
about someone (a name, a model, a date), and acknowledgements, offers and opinions are
not (capture/meaning.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memoracle.capture.extract import extract
from memoracle.capture.meaning import CONFIDENCE, judge
from memoracle.capture.rules import default_rules
from memoracle.jobs.bench.capture_set import run_capture_set
from memoracle.types import Candidate

DEV_SET = Path(__file__).parents[2] / "bench" / "data" / "capture-dev.jsonl"


def only(text: str, role: str = "user", speaker: str | None = None) -> Candidate:
    found = extract(text, role=role, speaker=speaker)
    assert len(found.candidates) == 1, (text, found)
    return found.candidates[0]


@pytest.mark.parametrize(
    ("text", "subject", "key"),
    [
        ("my sister Noor lives in Seattle", "user's sister Noor", "Seattle"),
        ("Жена Анна работает в Siemens.", "user's жена Анна", "Siemens"),
        ("Ma sœur Noor habite à Seattle.", "user's sœur Noor", "Seattle"),
        ("Mi perro Pimienta le tiene miedo a las tormentas.", "user's perro Pimienta", "tormentas"),
    ],
)
def test_a_fact_about_someone_else_is_kept_with_its_subject(
    text: str, subject: str, key: str
) -> None:
    candidate = only(text)
    assert candidate.subject == subject
    assert key in candidate.text and candidate.kind == "fact"


def test_the_relation_belongs_to_the_speaker_by_name() -> None:
    assert only("My wife Anna works at Siemens", speaker="Caroline").subject == (
        "Caroline's wife Anna"
    )


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I'm on a Pixel 8 now", "Pixel 8"),
        ("Теперь у меня Pixel 8.", "Pixel 8"),
        ("Je suis sur un Pixel 8 maintenant.", "Pixel 8"),
        ("Dome at home: we use a Synology NAS for backups.", "Synology"),
    ],
)
def test_a_device_or_a_named_thing_of_the_speaker_is_a_fact(text: str, key: str) -> None:
    candidate = only(text)
    assert key in candidate.text and candidate.subject == "user"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("got promoted yesterday", "promoted"),
        ("Flying to Tokyo on December 12 for a conference.", "Tokyo"),
        ("Meeting with Carlos mañana at 10, he's bringing the contract.", "Carlos"),
        ("Мой начальник Олег уходит в отпуск до января.", "отпуск"),
    ],
)
def test_a_statement_with_a_time_is_an_event(text: str, key: str) -> None:
    candidate = only(text)
    assert candidate.kind == "event" and key in candidate.text


def test_the_key_object_of_a_turn_is_kept_beside_its_rule_memory() -> None:
    found = extract("first day at Fernwood Labs done! I'm a data engineer now", role="user")
    texts = [c.text for c in found.candidates]
    assert any("Fernwood Labs" in t for t in texts)
    assert any("data engineer" in t for t in texts)


def test_a_named_thing_alone_with_no_one_and_no_time_is_not_kept() -> None:
    assert extract("Paris is lovely in the spring.", role="user").candidates == ()


@pytest.mark.parametrize(
    "text",
    [
        "Got it!",
        "Понял, обновил.",
        "Хм, надо подумать.",
        "Ok, ça marche.",
        "I think Rust is nicer than Go for this.",
        "Which one is cheaper, the Pixel or the iPhone?",
        "If I won the lottery I'd buy a boat.",
    ],
)
def test_acknowledgements_opinions_and_questions_make_nothing(text: str) -> None:
    assert extract(text, role="user").candidates == (), text


@pytest.mark.parametrize(
    "text",
    [
        "I'll remind you Thursday.",
        "Напомню вам в четверг.",
        "Je vous le rappellerai jeudi.",
        "Te lo recuerdo el jueves.",
        "If you want, I can draft an email to your landlord.",
        "Хотите, добавлю это в календарь?",
    ],
)
def test_an_assistant_offer_makes_nothing(text: str) -> None:
    found = extract(text, role="assistant")
    assert found.candidates == (), text


def test_an_empty_promise_is_skipped_as_an_offer() -> None:
    assert extract("I'll remind you Thursday.", role="assistant").skipped == ("offer",)


def test_an_assistant_promise_with_content_is_still_a_task() -> None:
    candidate = only("I'll remind you about the domain renewal on Monday.", role="assistant")
    assert candidate.kind == "task"


@pytest.mark.parametrize(
    ("text", "kind", "key"),
    [
        ("Got it, I've noted that your new address is 14 Elm Street.", None, "14 Elm Street"),
        ("Записал: ваш новый адрес — улица Ленина, 14.", "fact", "Ленина, 14"),
        ("Como confirmaste, el informe se entrega el 15 de enero.", "task", "informe"),
    ],
)
def test_what_the_user_confirmed_is_kept_about_the_user(
    text: str, kind: str | None, key: str
) -> None:
    candidate = only(text, role="assistant")
    assert key in candidate.text and candidate.subject == "user"
    assert kind is None or candidate.kind == kind


def test_a_judged_memory_ranks_below_a_rule_memory() -> None:
    rules = default_rules().get("en")
    judged = judge("I'm on a Pixel 8 now", rules, "user")
    assert judged is not None and judged.confidence == CONFIDENCE
    assert judged.rule == "en.meaning.said"
    assert only("I live in Lisbon.").confidence > CONFIDENCE


def test_a_hedged_statement_is_not_judged_worth_keeping() -> None:
    rules = default_rules().get("en")
    assert judge("Maybe I'll get a Pixel 9 next month", rules, "user") is None


def test_the_dev_set_keeps_its_scores(tmp_path: Path) -> None:
    """The dev set's first 259 turns (bench/data/capture-dev.jsonl) scored 0.56 recall,
    0.97 precision, 0.06 noise by rules alone; by meaning (rules and cues, the hash
    embedder: no learned decision) it must stay far above that. The turns added for the
    learned decision (ids ``xx-mNN``, ``nc-xx-NNN``) are scored with it in
    tests/capture/test_classify.py."""
    first = [line for line in DEV_SET.read_text(encoding="utf-8").splitlines()
             if not re.match(r'\{"id": "(?:nc-|\w+-m)', line)]  # fmt: skip
    assert len(first) == 259
    path = tmp_path / "first.jsonl"
    path.write_text("\n".join(first) + "\n", encoding="utf-8")
    report = run_capture_set(path)
    overall = report.overall.to_json()
    assert overall["recall"] >= 0.9
    assert overall["precision"] >= 0.97
    assert overall["noise_rate"] <= 0.02


def test_a_relation_later_in_the_sentence_does_not_hide_the_named_thing() -> None:
    candidate = only("Перешёл на MacBook Air, старый ноут отдал сыну.")
    assert "MacBook Air" in candidate.text and candidate.kind == "fact"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I'm not renewing the gym membership, done with it.", "decision"),
        ("Всё, отказываюсь от абонемента в спортзал.", "decision"),
        ("J'arrête la salle de sport, je résilie mon abonnement.", "decision"),
        ("Dejo el gimnasio, voy a cancelar la cuota.", "decision"),
        ("Please keep answers short, bullet points are best for me.", "preference"),
        ("Отвечай, пожалуйста, коротко и по делу.", "preference"),
        ("Respuestas cortas, por favor, con viñetas.", "preference"),
    ],
)
def test_decisions_and_styles_said_without_a_template_verb(text: str, kind: str) -> None:
    assert only(text).kind == kind


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Je suis végétarien depuis dix ans.", "user"),
        ("Je suis végétarienne.", "user"),
        ("Mon chien Poivre a peur de l'orage.", "user's chien Poivre"),
    ],
)
def test_french_masculine_and_feminine_forms_both_match(text: str, subject: str) -> None:
    assert only(text).subject == subject


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Need to renew my passport before March.", "task"),
        ("gotta renew the car insurance before March!!", "task"),
        ("Have to file the VAT return by January 31.", "task"),
        ("Decided to go with Hetzner for the new cluster.", "decision"),
        ("Big fan of Ethiopian coffee, the lighter the roast the better.", "preference"),
        ("I swim every Saturday at the Pontoon pool.", "fact"),  # a habit: no one date
        ("Cet hiver je pars skier à Chamonix avec les collègues.", "event"),  # a season
        ("este verano quiero hacer el Camino del Norte", "event"),
        ("Went to Lisbon in October with my sister.", "event"),
    ],
)
def test_a_statement_kept_by_meaning_has_the_kind_its_cues_say(text: str, kind: str) -> None:
    assert only(text).kind == kind


def test_a_turn_of_phrase_is_no_task() -> None:
    """A sentence opening on "Need to say" is a remark, not a task."""
    rules = default_rules().get("en")
    said = judge("Need to say, Lisbon in October was lovely.", rules, "user")
    assert said is None or said.kind != "task"


@pytest.mark.parametrize(
    "text",
    [
        "у меня астма с детства, так что бегать зимой на улице для меня не вариант",
        "I can't run outside in winter, my asthma hates it.",
        "En hiver je cours moins, j'ai de l'asthme.",
        "En verano trabajo desde Cádiz.",
    ],
)
def test_a_season_said_of_a_habit_makes_no_event(text: str) -> None:
    """A season with "this/last/next" is a time ("Cet hiver je pars skier…"); "in winter",
    "зимой" alone say what one usually does."""
    assert all(c.kind != "event" for c in extract(text, role="user").candidates)
