"""extract: sentences -> at most one typed candidate each, in four languages, no LLM."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memoracle.capture.extract import HEDGE_FACTOR, extract, split_sentences
from memoracle.errors import InvalidInput
from memoracle.types import Candidate

GOLD = Path(__file__).parent / "data" / "capture_gold.jsonl"


def one(text: str, *, role: str = "user", speaker: str | None = None) -> Candidate:
    found = extract(text, role=role, speaker=speaker).candidates
    assert len(found) == 1, (text, found)
    return found[0]


# --- the labelled set ------------------------------------------------------------------


def _gold() -> list[dict[str, Any]]:
    with GOLD.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def test_gold_set_shape() -> None:
    rows = _gold()
    for lang in ("en", "ru", "fr", "es"):
        mine = [row for row in rows if row["lang"] == lang]
        negatives = sum(1 for row in mine if not row["kinds"])
        assert len(mine) >= 60
        assert negatives >= len(mine) // 3, lang
        kinds = {kind for row in mine for kind in row["kinds"]}
        assert kinds >= {"fact", "preference", "decision", "task", "guardrail", "event", "error"}


@pytest.mark.parametrize("lang", ["en", "ru", "fr", "es"])
def test_gold_precision_and_recall(lang: str) -> None:
    """Kind assignment on the labelled set, language detected as in the pipeline.

    Target: precision >= 0.9, recall >= 0.85. Splits: dev (the rules were
    written against it), holdout1-3 (written afterwards; see the report for their
    numbers before any rule was adjusted for them).
    """
    tp = fp = fn = 0
    wrong_action = []
    for row in _gold():
        if row["lang"] != lang:
            continue
        result = extract(row["text"], role=row["role"], speaker=row["speaker"])
        got = Counter(candidate.kind for candidate in result.candidates)
        expected = Counter(row["kinds"])
        hit = sum((got & expected).values())
        tp += hit
        fp += sum(got.values()) - hit
        fn += sum(expected.values()) - hit
        actions = {c.action for c in result.candidates if c.action != "store"}
        if actions != ({row["action"]} if "action" in row else set()):
            wrong_action.append(row["text"])
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    assert precision >= 0.9, f"{lang}: precision {precision:.3f} (tp={tp} fp={fp})"
    assert recall >= 0.85, f"{lang}: recall {recall:.3f} (tp={tp} fn={fn})"
    assert not wrong_action


# --- every family in every language ----------------------------------------------------

FAMILIES = [
    # (lang, text, kind, rule prefix)
    ("en", "Forget that I live in Paris.", "fact", "en.forget."),
    ("ru", "Забудь, что я живу в Париже.", "fact", "ru.forget."),
    ("fr", "Oublie que j'habite à Paris.", "fact", "fr.forget."),
    ("es", "Olvida que vivo en París.", "fact", "es.forget."),
    ("en", "Remember that I'm allergic to peanuts.", "fact", "en.remember."),
    ("ru", "Запомни: у меня аллергия на арахис.", "fact", "ru.remember."),
    ("fr", "Souviens-toi que je suis allergique aux cacahuètes.", "fact", "fr.remember."),
    ("fr", "N'oublie pas que je suis végétarienne.", "fact", "fr.remember."),
    ("es", "Recuerda que soy alérgica a los cacahuetes.", "fact", "es.remember."),
    ("en", "Never push to main.", "guardrail", "en.guardrail."),
    ("en", "Always ask before deleting anything.", "guardrail", "en.guardrail."),
    ("en", "Don't ever commit secrets.", "guardrail", "en.guardrail."),
    ("ru", "Никогда не пушь в main.", "guardrail", "ru.guardrail."),
    ("ru", "Всегда спрашивай перед удалением файлов.", "guardrail", "ru.guardrail."),
    ("fr", "Ne jamais pousser sur main.", "guardrail", "fr.guardrail."),
    ("fr", "Toujours demander avant de supprimer.", "guardrail", "fr.guardrail."),
    ("es", "Nunca hagas push a main.", "guardrail", "es.guardrail."),
    ("es", "Siempre pregunta antes de borrar.", "guardrail", "es.guardrail."),
    ("en", "We decided to move the docs to MkDocs.", "decision", "en.decision."),
    ("en", "Let's go with Redis for the queue.", "decision", "en.decision."),
    ("ru", "Мы решили перейти на Redis.", "decision", "ru.decision."),
    ("fr", "On a décidé de passer à Redis.", "decision", "fr.decision."),
    ("es", "Decidimos pasarnos a Redis.", "decision", "es.decision."),
    ("en", "I need to renew the passport by Friday.", "task", "en.task."),
    ("en", "TODO: rotate the keys", "task", "en.task."),
    ("ru", "Надо продлить паспорт до пятницы.", "task", "ru.task."),
    ("fr", "Je dois renouveler mon passeport avant vendredi.", "task", "fr.task."),
    ("es", "Tengo que renovar el pasaporte antes del viernes.", "task", "es.task."),
    ("en", "I love sushi.", "preference", "en.preference."),
    ("en", "I prefer tea over coffee.", "preference", "en.preference."),
    ("ru", "Я люблю суши.", "preference", "ru.preference."),
    ("ru", "Предпочитаю чай кофе.", "preference", "ru.preference."),
    ("fr", "J'adore les sushis.", "preference", "fr.preference."),
    ("fr", "Je préfère le thé au café.", "preference", "fr.preference."),
    ("es", "Me encanta el sushi.", "preference", "es.preference."),
    ("es", "Prefiero el té al café.", "preference", "es.preference."),
    ("en", "The build failed with exit code 2.", "error", "en.error."),
    ("en", "error: cannot find module 'left-pad'", "error", "en.error."),
    ("ru", "Сборка не работает после обновления.", "error", "ru.error."),
    ("ru", "Ошибка: не найден модуль.", "error", "ru.error."),
    ("fr", "La CI échoue depuis ce matin.", "error", "fr.error."),
    ("fr", "Erreur : le module est introuvable.", "error", "fr.error."),
    ("es", "El build falló otra vez.", "error", "es.error."),
    ("es", "La app no funciona en Android.", "error", "es.error."),
    ("en", "I went to Rome last spring.", "event", "en.event."),
    ("en", "We adopted a kitten on Sunday.", "event", "en.event."),
    ("ru", "Я ходил в музей в субботу.", "event", "ru.event."),
    ("fr", "Je suis allé à Rome au printemps dernier.", "event", "fr.event."),
    ("es", "Fui a Roma la primavera pasada.", "event", "es.event."),
    ("en", "I live in Lisbon.", "fact", "en.fact."),
    ("en", "My sister is a nurse.", "fact", "en.fact."),
    ("ru", "Я живу в Казани.", "fact", "ru.fact."),
    ("fr", "Je travaille chez Decathlon.", "fact", "fr.fact."),
    ("es", "Tengo dos hijos.", "fact", "es.fact."),
]


@pytest.mark.parametrize(("lang", "text", "kind", "prefix"), FAMILIES)
def test_family(lang: str, text: str, kind: str, prefix: str) -> None:
    candidate = one(text)
    assert candidate.lang == lang
    assert candidate.kind == kind
    assert candidate.rule.startswith(prefix)


@pytest.mark.parametrize("lang", ["en", "ru", "fr", "es"])
def test_every_family_is_covered_per_language(lang: str) -> None:
    families = {prefix.split(".")[1] for code, _, _, prefix in FAMILIES if code == lang}
    assert families == {
        "forget",
        "remember",
        "guardrail",
        "decision",
        "task",
        "preference",
        "error",
        "event",
        "fact",
    }


# --- what yields nothing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Did you go?", "question"),
        ("Did you end up buying the house", "question"),
        ("¿Fuiste al concierto?", "question"),
        ("Ты была на концерте?", "question"),
        ("Tu es allée au concert ?", "question"),
        ("What if I moved to Berlin?", "hypothetical"),
        ("Imagine if we had a GPU cluster.", "hypothetical"),
        ("А что если я перееду в Берлин?", "hypothetical"),
        ("Et si je déménageais à Berlin ?", "hypothetical"),
        ("¿Qué pasaría si me mudara a Berlín?", "hypothetical"),
        ("If I were rich I'd buy a boat.", "hypothetical"),
        ("Hey Mel!", "smalltalk"),
        ("Thanks, Maria.", "smalltalk"),
        ("lol", "smalltalk"),
        ("ok", "smalltalk"),
        ("How are you doing?", "question"),
        ("how are you", "question"),  # a question even without "?"
        ("good morning everyone", "smalltalk"),
        ("😂😂😂", "smalltalk"),
        ("Спасибо большое!", "smalltalk"),
        ("Merci beaucoup !", "smalltalk"),
        ("¡Muchas gracias!", "smalltalk"),
        ("That's awesome!", "smalltalk"),
        ("The weather was nice.", "no_match"),
    ],
)
def test_skipped(text: str, reason: str) -> None:
    result = extract(text, role="user")
    assert result.candidates == ()
    assert result.skipped == (reason,)


def test_polite_request_is_not_a_question() -> None:
    assert one("Could you remind me to call the bank tomorrow?").kind == "task"
    assert one("Can you remember that my flight lands at 6pm?").action == "remember"
    assert one("Можешь напомнить мне завтра позвонить в банк?").kind == "task"


def test_question_tag_keeps_the_statement() -> None:
    candidate = one("I went to Rome last spring, have you been?")
    assert candidate.kind == "event"
    assert candidate.text == "I went to Rome last spring"
    assert one("Fui a Roma la primavera pasada, ¿y tú?").text == "Fui a Roma la primavera pasada"


def test_pep_talk_is_not_a_guardrail() -> None:
    for text in ["Never give up on your dreams!", "Always happy to help!", "Don't worry about it."]:
        assert extract(text, role="user").candidates == (), text


# --- attribution and roles -------------------------------------------------------------


def test_first_person_belongs_to_the_speaker() -> None:
    candidate = one("Hey Mel! I went to a support group yesterday.", speaker="Caroline")
    assert (candidate.kind, candidate.subject) == ("event", "Caroline")
    assert candidate.text == "I went to a support group yesterday."


def test_without_speaker_the_role_owns_it() -> None:
    assert one("I live in Lisbon.").subject == "user"


def test_possessive_subject_is_resolved() -> None:
    candidate = one("My brother lives in Denver.", speaker="Caroline")
    assert (candidate.subject, candidate.predicate, candidate.object) == (
        "Caroline's brother",
        "lives_in",
        "Denver",
    )


def test_assistant_turns_yield_only_decisions_tasks_errors_events() -> None:
    text = (
        "I think you'd like the new Murakami novel. You prefer dark mode. "
        "We decided to keep three retries. I'll renew the domain on Monday. "
        "The build failed with exit code 1. I merged the pull request."
    )
    result = extract(text, role="assistant")
    assert [c.kind for c in result.candidates] == ["decision", "task", "error", "event"]
    assert all(c.subject in (None, "assistant") for c in result.candidates)
    assert result.skipped == ("no_match", "no_match")


def test_assistant_sentences_of_other_kinds_are_skipped_as_assistant() -> None:
    assert extract("I love hiking.", role="assistant").skipped == ("assistant",)
    assert extract("I love hiking.", role="user").candidates[0].kind == "preference"


def test_assistant_cannot_issue_guardrails_or_remember() -> None:
    for text in ["Never push to main.", "Remember that you are vegan.", "I love this idea."]:
        assert extract(text, role="assistant").candidates == (), text


# --- text, directives, hedges, triples -------------------------------------------------


def test_text_is_the_sentence_as_said() -> None:
    candidate = one("  - I’m allergic to penicillin.  ")
    assert candidate.text == "I’m allergic to penicillin."  # curly quote kept, bullet dropped
    assert candidate.object == "penicillin"


def test_due_expression_stays_in_the_text() -> None:
    candidate = one("Remind me to renew the domain by next Tuesday")
    assert candidate.kind == "task"
    assert "by next Tuesday" in candidate.text


def test_remember_carries_the_content_and_its_kind() -> None:
    candidate = one("Please remember that I prefer short answers.")
    assert candidate.action == "remember"
    assert candidate.kind == "preference"
    assert candidate.text == "I prefer short answers"
    assert candidate.rule == "en.remember.that"
    assert candidate.importance >= 0.8


def test_remember_without_a_typed_content_is_a_fact() -> None:
    candidate = one("Remember: the staging DB password rotates monthly.")
    assert (candidate.kind, candidate.action) == ("fact", "remember")


def test_forget_carries_what_to_forget() -> None:
    candidate = one("Forget what I said about the Redis cluster.")
    assert candidate.action == "forget"
    assert candidate.text == "the Redis cluster"


def test_vague_forget_is_small_talk() -> None:
    assert extract("Forget it.", role="user").candidates == ()
    assert extract("Oublie ça.", role="user").candidates == ()


def test_remember_to_is_a_task() -> None:
    candidate = one("Don't forget to water the plants tomorrow.")
    assert (candidate.kind, candidate.action) == ("task", "store")


def test_hedged_sentences_keep_a_weaker_candidate() -> None:
    firm = one("I'm moving to Lyon next year.")
    maybe = one("I might move to Lyon.")
    assert (maybe.kind, maybe.hedged) == ("event", True)
    assert (firm.kind, firm.hedged) == ("event", False)
    assert maybe.rule == firm.rule
    assert maybe.confidence == pytest.approx(firm.confidence * HEDGE_FACTOR)
    assert one("Возможно, перееду в Лион.").hedged
    assert one("Je vais peut-être déménager à Lyon.").hedged
    assert one("Quizás me mude a Lyon.").hedged


@pytest.mark.parametrize(
    ("text", "triple"),
    [
        ("I work at Spotify as a designer.", ("works_at", "Spotify")),
        ("My email is dana.k@proton.me.", ("email", "dana.k@proton.me")),
        ("My favorite color is teal.", ("favorite_color", "teal")),
        ("I'm 34.", ("age", "34")),
        ("I have two kids and a dog.", ("has", "two kids")),
        ("We use GitHub Actions for CI.", ("uses", "GitHub Actions")),
        ("Я живу в Казани уже пять лет.", ("lives_in", "Казани")),
        ("J'habite à Nantes depuis 2019.", ("lives_in", "Nantes")),
        ("Vivo en Zaragoza desde hace años.", ("lives_in", "Zaragoza")),
        ("Мой любимый фильм — «Амели».", ("любимый_фильм", "Амели")),
    ],
)
def test_triples(text: str, triple: tuple[str, str]) -> None:
    candidate = one(text, speaker="Sam")
    assert candidate.subject == "Sam"
    assert (candidate.predicate, candidate.object) == triple


def test_vague_objects_are_not_stored() -> None:
    for text in ["I love it!", "I love that.", "I love you guys.", "J'adore ça !"]:
        assert extract(text, role="user").candidates == (), text


# --- sentences -------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text, frozenset({"dr", "e.g", "mr"}))]


def test_split_on_stops_and_newlines() -> None:
    assert _sentences("Hi! I went out. did you?\nYes… We did; it was fun") == [
        "Hi!",
        "I went out.",
        "did you?",
        "Yes…",
        "We did;",
        "it was fun",
    ]


def test_emoji_between_two_sentences_end_the_first() -> None:
    # Chat puts an emoji where a stop would be; the emoji belong to neither sentence.
    assert _sentences("got a MacBook Air M3 🙌 тишина! как перенести файлы?") == [
        "got a MacBook Air M3",
        "тишина!",
        "как перенести файлы?",
    ]
    assert _sentences("so happy 😊") == ["so happy 😊"]  # at the end: nothing to split
    # An emoji said as a word, a flag or an older symbol does not end a sentence.
    for said in ("I love 🍕 pizza", "I moved to 🇩🇪 Berlin last month", "Never ⚠️ deploy on Fridays"):
        assert _sentences(said) == [said]
    # The statement is kept; only the question after the emoji is skipped.
    found = extract("I have a Fairphone 5 now 🌱 how do I move my photos?", role="user")
    assert [c.text for c in found.candidates] == ["I have a Fairphone 5 now"]
    assert found.skipped == ("question",)


def test_an_ellipsis_before_lower_case_does_not_split() -> None:
    assert _sentences("I was like... whatever, it was fine.") == [
        "I was like... whatever, it was fine."
    ]


def test_split_keeps_abbreviations_numbers_and_urls() -> None:
    text = "I saw Dr. Smith at 3.30 about v2.1.0, e.g. the rash. See https://x.io/a.b now."
    assert _sentences(text) == [
        "I saw Dr. Smith at 3.30 about v2.1.0, e.g. the rash.",
        "See https://x.io/a.b now.",
    ]


def test_split_drops_bullets() -> None:
    text = "Decisions:\n- Use Postgres 16\n* Never deploy on Fridays\n2) Ship v2 by May 5"
    assert _sentences(text) == [
        "Decisions:",
        "Use Postgres 16",
        "Never deploy on Fridays",
        "Ship v2 by May 5",
    ]


def test_one_candidate_per_sentence_in_order() -> None:
    text = "Thanks! The deploy failed again. Remind me to check the logs tomorrow. lol"
    result = extract(text, role="user")
    assert [c.kind for c in result.candidates] == ["error", "task"]
    assert result.skipped == ("smalltalk", "smalltalk")


def test_highest_priority_family_wins() -> None:
    # Both a guardrail and a preference could fire; guardrails come first.
    assert one("Never use tabs, I hate them.").kind == "guardrail"


# --- language --------------------------------------------------------------------------


def test_language_is_detected_or_forced() -> None:
    assert extract("Я люблю суши.", role="user").lang == "ru"
    assert extract("I love sushi.", role="user", lang="en").lang == "en"


def test_unknown_language_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="No capture rules for language 'de'"):
        extract("Ich liebe Sushi.", role="user", lang="de")


def test_empty_text() -> None:
    result = extract("", role="user")
    assert (result.candidates, result.skipped) == ((), ())


def test_pure() -> None:
    text = "Hey Mel! I went to a support group yesterday and it was so powerful."
    assert extract(text, role="user", speaker="Caroline") == extract(
        text, role="user", speaker="Caroline"
    )


def test_a_name_alone_is_not_small_talk() -> None:
    assert extract("Thanks, Maria!", role="user").skipped == ("smalltalk",)
    assert extract("Caroline!", role="user").skipped == ("no_match",)


def test_pasted_walls_of_text_are_skipped() -> None:
    wall = "I love " + "lots of very nice things and " * 100
    assert extract(wall, role="user").skipped == ("too_long",)


def test_obligations_with_contractions() -> None:
    assert one("I've got to renew my passport by May.").kind == "task"
    assert one("We'll have to migrate before the audit.").kind == "task"
    assert one("I got to go to a car workshop last week!").kind == "event"  # had the chance
    assert extract("I have to go, talk later!", role="user").candidates == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The gate code is 4512. Please remember that.", "The gate code is 4512"),
        ("The gate code is 4512, remember that!", "The gate code is 4512"),
        ("Сервер зовут «Кладовка» 🙂 Запомни, пожалуйста.", "Сервер зовут «Кладовка»"),
        ("Сервер зовут «Кладовка». Запомни это.", "Сервер зовут «Кладовка»"),
        ("Le code du portail est le 4512, retiens-le.", "Le code du portail est le 4512"),
        ("Mi vuelo sale a las 7. Recuérdalo, por favor.", "Mi vuelo sale a las 7"),
    ],
)
def test_trailing_remember_directive_keeps_what_was_just_said(text: str, expected: str) -> None:
    found = extract(text, role="user")
    assert [(c.action, c.text) for c in found.candidates] == [("remember", expected)]


@pytest.mark.parametrize(
    "text",
    [
        "I always remember that.",
        "Remember that.",
        "Did you remember that?",
        "What if I moved? Remember that.",
    ],
)
def test_remember_tail_needs_something_to_point_at(text: str) -> None:
    assert not [c for c in extract(text, role="user").candidates if c.action == "remember"]


def test_remember_tail_upgrades_a_typed_candidate() -> None:
    found = extract("I'm allergic to peanuts. Please remember that.", role="user")
    (candidate,) = found.candidates
    assert (candidate.action, candidate.predicate, candidate.object) == (
        "remember",
        "allergic_to",
        "peanuts",
    )
    assert candidate.rule.endswith("+remember.tail")


@pytest.mark.parametrize(
    "text",
    [
        "And one hard rule: never run database migrations on a Friday.",
        "Одно правило: никогда не удаляй бэкапы.",
        "Une règle : ne jamais pousser sur main.",
        "Regla de oro: nunca despliegues los viernes.",
    ],
)
def test_guardrail_after_a_rule_lead_in(text: str) -> None:
    assert [c.kind for c in extract(text, role="user").candidates] == ["guardrail"]
