"""Lifecycle by meaning through the engine: a report finishes its task, a change of plan
replaces the plan, a negation or new value said in a turn capture keeps nothing of
still settles the slot, and a "forget …" finds what it describes in the caller's scope."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Memory, Scope, Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ANNA = Scope(user="anna")
BOB = Scope(user="bob")


def _say(engine: Engine, clock: FixedClock, text: str, *, scope: Scope = ANNA) -> None:
    clock.advance(hours=1)
    n = len(engine.list_memories(status=None, limit=1000, scope=scope))
    engine.capture([Turn("user", text, clock.now(), "s", f"{text}-{n}")], scope=scope)


def _one(engine: Engine, part: str, *, scope: Scope = ANNA) -> Memory:
    found = [
        m for m in engine.list_memories(status=None, limit=1000, scope=scope) if part in m.text
    ]
    assert len(found) == 1, [m.text for m in found]
    return found[0]


def _actions(engine: Engine, memory: Memory) -> list[str]:
    return [e.action for e in engine.history(memory.id)]


@pytest.mark.parametrize(
    ("task", "report"),
    [
        ("I need to finish the tax return by Friday.", "I finished the tax return."),
        ("Мне нужно сдать отчёт до пятницы.", "Я сдал отчёт."),
        ("Je dois faire la déclaration d'impôts.", "J'ai fini la déclaration d'impôts."),
        ("Tengo que terminar el informe trimestral.", "Ya terminé el informe trimestral."),
    ],
)
def test_a_report_closes_the_task_it_names(
    engine: Engine, clock: FixedClock, task: str, report: str
) -> None:
    _say(engine, clock, task)
    _say(engine, clock, "I need to call the bank.")
    _say(engine, clock, report)
    done = _one(engine, task[:12])
    assert done.kind == "task" and done.details["done"] is True
    assert "done" in _actions(engine, done)
    assert not _one(engine, "call the bank").details.get("done")  # another task stays open


def test_a_report_the_rules_keep_nothing_of_still_closes_the_task(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "I need to call the plumber.")
    _say(engine, clock, "I called the plumber.")  # capture keeps no memory of this turn
    assert _one(engine, "plumber").details["done"] is True


def test_a_task_about_nobody_is_the_speaker_s(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "TODO: update the README.")
    _say(engine, clock, "The README is updated.")
    assert _one(engine, "TODO").details["done"] is True


def test_a_denial_closes_nothing(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "I need to finish the tax return by Friday.")
    _say(engine, clock, "I haven't finished the tax return yet.")
    assert not _one(engine, "need to finish").details.get("done")


@pytest.mark.parametrize(
    ("plan", "change", "new"),
    [
        (
            "We'll deploy on Vercel.",
            "Change of plans — we'll host on Cloudflare Pages instead.",
            "Cloudflare",
        ),
        ("On va partir en Italie cet été.", "Finalement on part en Grèce cet été.", "Grèce"),
        ("Мы будем деплоить на Heroku.", "Планы поменялись: деплоим на Render.", "Render"),
        ("Decidimos ir a Portugal en agosto.", "Al final iremos a Marruecos en agosto.", "Marr"),
        # The change read as a plain fact by capture, naming the plan it changes.
        (
            "We decided to use PostgreSQL for the backend.",
            "We switched to MySQL for the backend.",
            "MySQL",
        ),
        # A Russian decision with its subject left out.
        ("Решили писать на Java.", "Передумали, теперь решили писать на Kotlin.", "Kotlin"),
    ],
)
def test_a_change_of_plan_supersedes_the_plan_linked_both_ways(
    engine: Engine, clock: FixedClock, plan: str, change: str, new: str
) -> None:
    _say(engine, clock, plan)
    _say(engine, clock, change)
    old, after = _one(engine, plan[:10]), _one(engine, new)
    assert old.status == "superseded" and old.superseded_by == after.id
    assert after.status == "active" and after.details["supersedes"] == [old.ref]
    assert old.valid_to == after.observed_at  # true until the new plan was said
    assert "supersede" in _actions(engine, old)


def test_a_change_of_plan_among_unrelated_plans_is_disputed_not_guessed(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "We'll deploy on Vercel.")
    _say(engine, clock, "We decided to use Stripe for payments.")
    _say(engine, clock, "Change of plans, we'll go with Kotlin instead.")
    vercel, stripe = _one(engine, "Vercel"), _one(engine, "Stripe")
    assert {vercel.status, stripe.status} == {"active", "disputed"}
    assert [p.memory.id for p in engine.pending()] == [stripe.id]


def test_a_change_of_plan_does_not_reach_a_plan_of_months_ago(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "We'll deploy on Vercel.")
    clock.advance(days=40)
    _say(engine, clock, "Change of plans — we'll host on Cloudflare Pages instead.")
    assert _one(engine, "Vercel").status == "active"


def test_a_short_description_that_fits_several_forgets_none(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "The team meeting is on Friday at 10am.")
    _say(engine, clock, "The weekly meeting with Bob is every Monday morning.")
    _say(engine, clock, "Forget the meeting on Friday, it got cancelled.")
    assert _one(engine, "Bob").status == "active"


def test_a_change_in_a_plain_fact_replaces_no_plan_it_does_not_name(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "We'll deploy on Vercel.")
    _say(engine, clock, "I switched to oat milk.")
    assert _one(engine, "Vercel").status == "active"


def test_a_plain_plan_replaces_nothing(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "We'll deploy on Vercel.")
    _say(engine, clock, "We decided to use Stripe for payments.")
    assert _one(engine, "Vercel").status == "active"


@pytest.mark.parametrize(
    ("old", "denial", "gone"),
    [
        ("I live in Paris near the Bastille.", "I no longer live in Paris.", "Bastille"),
        ("Я живу в Берлине на Александерплац.", "Я больше не живу в Берлине.", "Александерплац"),
        ("J'habite à Lille près de la gare.", "Je n'habite plus à Lille.", "gare"),
        ("I work at Initech as a contractor.", "I don't work at Initech anymore.", "contractor"),
    ],
)
def test_a_negation_alone_ends_what_it_denies(
    engine: Engine, clock: FixedClock, old: str, denial: str, gone: str
) -> None:
    _say(engine, clock, old)
    _say(engine, clock, denial)
    before, after = _one(engine, gone), _one(engine, denial[:12])
    assert before.status == "superseded" and before.superseded_by == after.id
    assert before.valid_to == after.observed_at


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I use an iPhone 12.", "I switched to a Pixel 8."),
        ("My manager is Linda.", "My new manager is Raj."),
        ("Мой руководитель — Олег.", "Мой новый руководитель — Марина."),
        ("J'étudie à la Sorbonne.", "J'étudie maintenant à Sciences Po."),
        ("Estudio en la Complutense.", "Ahora estudio en la Autónoma."),
        ("My laptop is a ThinkPad X1.", "I replaced my laptop with a MacBook Air."),
    ],
)
def test_new_slots_supersede_their_old_value(
    engine: Engine, clock: FixedClock, old: str, new: str
) -> None:
    _say(engine, clock, old)
    _say(engine, clock, new)
    assert _one(engine, old[:14]).status == "superseded"
    assert _one(engine, new[:14]).status == "active"


def test_two_values_that_coexist_stay(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "I use an iPhone 12.")
    _say(engine, clock, "My laptop is a ThinkPad X1.")
    assert {m.status for m in engine.list_memories(status=None, scope=ANNA)} == {"active"}


def test_a_new_value_for_a_slot_nobody_filled_is_one_memory_and_replaces_nothing(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "I switched to a Pixel 8.")  # capture by meaning keeps it
    stored = engine.list_memories(status=None, scope=ANNA)
    assert [(m.text, m.status) for m in stored] == [("I switched to a Pixel 8.", "active")]


@pytest.mark.parametrize(
    ("memory", "forget"),
    [
        ("I work at Oracle as a DBA.", "Forget what I told you about my old job."),
        ("Я работаю в Мегафоне.", "Забудь про мою работу."),
        ("Mon ex est Thomas.", "Oublie ce que je t'ai dit sur mon ex."),
        ("Trabajo en Iberdrola.", "Olvida lo de mi trabajo."),
        ("My ex is Jake.", "Oublie ce que je t'ai dit sur mon ex."),
        # When it was said, and why it should go, are not part of what is described.
        (
            "My ex Marcus keeps texting me at midnight.",
            "Forget what I said about my ex last night, I don't want that stored anywhere.",
        ),
        (
            "Mon frère est au chômage depuis mars.",
            "Oublie ce que je t'ai dit hier sur mon frère, c'est pas à moi de le partager.",
        ),
    ],
)
def test_forget_said_finds_what_it_describes_in_the_caller_s_scope(
    engine: Engine, clock: FixedClock, memory: str, forget: str
) -> None:
    _say(engine, clock, memory)
    _say(engine, clock, memory, scope=BOB)
    _say(engine, clock, "I like sushi.")
    _say(engine, clock, forget)
    assert _one(engine, memory[:10]).status == "forgotten"
    assert "forget" in _actions(engine, _one(engine, memory[:10]))
    assert _one(engine, memory[:10], scope=BOB).status == "active"  # not the caller's
    assert _one(engine, "sushi").status == "active"


def test_people_talking_to_each_other_forget_nothing_by_description(
    engine: Engine, clock: FixedClock
) -> None:
    engine.capture([Turn("speaker", "I work at Oracle.", clock.now(), "s", "1", speaker="Jo")])
    engine.capture(
        [Turn("speaker", "Forget about my job for tonight!", clock.now(), "s", "2", speaker="Jo")]
    )
    assert {m.status for m in engine.list_memories(status=None)} == {"active"}


def test_an_ambiguous_description_forgets_nothing(engine: Engine, clock: FixedClock) -> None:
    engine.remember("My locker is number 12.", scope=ANNA)
    engine.remember("The door code changed last week.", scope=ANNA)
    engine.capture([Turn("user", "Forget the locker code.", clock.now(), "s", "f")], scope=ANNA)
    assert {m.status for m in engine.list_memories(status=None, scope=ANNA)} == {"active"}


def test_forget_query_by_description_and_candidates_when_unclear(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("I work at Oracle as a DBA.")
    engine.remember("My locker is number 12.")
    engine.remember("The door code changed last week.")
    assert [m.text for m in engine.forget_matching("my old job", dry_run=True)] == [
        "I work at Oracle as a DBA."
    ]
    with pytest.raises(
        InvalidInput, match=r"fits 2 memories, so none was forgotten: m_\d+ '.*'; m_\d+"
    ) as refused:
        engine.forget_matching("the locker code")
    assert "locker is number" in str(refused.value) and "door code" in str(refused.value)
    assert [m.status for m in engine.forget_matching("my old job")] == ["forgotten"]
