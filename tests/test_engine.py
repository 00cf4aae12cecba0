from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine, parse_ref
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.types import Scope, Turn

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _kinds(engine: Engine) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in engine.list_memories(limit=1000):
        out.setdefault(m.kind, []).append(m.text)
    return out


def test_capture_stores_episode_and_typed_memories(engine: Engine) -> None:
    result = engine.capture(
        [
            Turn("user", "I prefer dark mode. Never push to main.", AT, "s1", "t1"),
            Turn("assistant", "Noted, I will keep that in mind.", AT, "s1", "t1"),
        ]
    )
    assert len(result.episodes) == 2
    kinds = {m.kind for m in result.added}
    assert {"preference", "guardrail"} <= kinds
    guardrail = next(m for m in result.added if m.kind == "guardrail")
    assert guardrail.pinned and guardrail.layer == "procedural"
    assert guardrail.episode_ids == (result.episodes[0],)
    assert guardrail.observed_at == AT and guardrail.source == "capture"
    assert guardrail.rule and guardrail.rule.startswith("en.")


def test_same_turn_twice_changes_nothing(engine: Engine) -> None:
    turn = Turn("user", "I live in Lyon.", AT, "s1", "t1")
    engine.capture([turn])
    before = engine.stats()
    again = engine.capture([turn])
    assert again.duplicate_turn and not again.added and not again.bumped
    after = engine.stats()
    assert (after.memories, after.episodes, after.audit_entries) == (
        before.memories,
        before.episodes,
        before.audit_entries,
    )
    assert engine.list_memories()[0].access_count == 0


def test_exact_duplicate_bumps_instead_of_adding(engine: Engine, clock: FixedClock) -> None:
    engine.capture([Turn("user", "I love hiking in the Alps.", AT, "s1", "t1")])
    clock.advance(days=3)
    result = engine.capture([Turn("user", "i love hiking in the alps!", AT, "s2", "t9")])
    assert not result.added and len(result.bumped) == 1
    m = result.bumped[0]
    assert m.access_count == 1 and len(m.episode_ids) == 2
    assert m.last_accessed_at == clock.now()
    assert engine.stats().memories == 1


def test_noise_is_not_stored_at_all(engine: Engine) -> None:
    for text in ("NO_REPLY", "HEARTBEAT_OK", "  HEARTBEAT_OK  "):
        result = engine.capture([Turn("assistant", text, AT)])
        assert not result.episodes and result.skipped[0].startswith("noise:")
    assert engine.stats().episodes == 0


@pytest.mark.parametrize(
    "text",
    ["What if I moved to Berlin?", "Did you go to the meeting?", "Thanks, have a nice day!"],
)
def test_questions_hypotheticals_smalltalk_stay_episodes(engine: Engine, text: str) -> None:
    result = engine.capture([Turn("user", text, AT)])
    assert result.episodes and not result.added
    assert engine.stats().memories == 0


def test_secrets_never_reach_the_store(engine: Engine) -> None:
    key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    engine.capture([Turn("user", f"Remember that the OpenAI key is {key}", AT, "s", "t")])
    assert key not in engine.database_path.read_bytes().decode("latin-1")
    episode = engine.stored_turn(1)
    assert episode is not None and "[REDACTED" in episode.text
    assert engine._store.memories.match("abcdefghijklmnopqrstuvwxyz0123456789ABCD") == []
    assert any(e.action == "redact" for e in engine._store.audit.entries())


def test_first_person_is_attributed_to_the_speaker_and_dated(engine: Engine) -> None:
    turn = Turn("speaker", "I went to a support group yesterday.", AT, "conv:1", "D1:3", "Caroline")
    result = engine.capture([turn])
    event = next(m for m in result.added if m.kind == "event")
    assert event.subject == "Caroline"
    assert event.valid_from == datetime(2023, 5, 7, tzinfo=UTC)
    assert event.valid_to == datetime(2023, 5, 8, tzinfo=UTC)
    # The same words said by the other speaker are a different memory.
    other = engine.capture([Turn("speaker", turn.text, AT, "conv:1", "D1:4", "Melanie")])
    assert other.added and other.added[0].subject == "Melanie"


def test_task_gets_its_due_date(engine: Engine) -> None:
    result = engine.capture([Turn("user", "Remind me to renew the domain by next Tuesday.", AT)])
    task = next(m for m in result.added if m.kind == "task")
    assert task.due_at is not None and task.due_at.date().isoformat() == "2023-05-16"


def test_forget_in_a_turn_marks_memories_forgotten(engine: Engine) -> None:
    engine.capture([Turn("user", "I like coffee with oat milk.", AT, "s", "1")])
    result = engine.capture(
        [Turn("user", "Forget that I like coffee with oat milk.", AT, "s", "2")]
    )
    assert [m.status for m in result.forgotten] == ["forgotten"]
    assert engine.get(result.forgotten[0].ref).status == "forgotten"
    assert engine.list_memories() == []
    assert engine.history(result.forgotten[0].id)[0].action == "forget"


def test_remember_forget_get_by_ref(engine: Engine) -> None:
    memory, inserted = engine.remember("The staging server is staging.internal:8443")
    assert inserted and memory.source == "manual" and memory.kind == "fact"
    again, inserted = engine.remember("the staging server is staging.internal:8443.")
    assert not inserted and again.id == memory.id
    assert engine.get(memory.ref).id == memory.id == engine.get(str(memory.id)).id
    assert engine.forget(memory.ref).status == "forgotten"
    assert engine.get(memory.ref).status == "forgotten"  # never deleted
    with pytest.raises(NotFound, match="m_999"):
        engine.get("m_999")
    with pytest.raises(InvalidInput):
        parse_ref("banana")


def test_forget_matching_dry_run_changes_nothing(engine: Engine) -> None:
    engine.remember("Our old office is at 5 Rue de la Paix")
    engine.remember("Our new office is at 12 Baker Street")
    preview = engine.forget_matching("old office", dry_run=True)
    assert [m.status for m in preview] == ["active"]
    assert len(engine.list_memories()) == 2
    done = engine.forget_matching("old office")
    assert [m.status for m in done] == ["forgotten"] and len(engine.list_memories()) == 1


def test_oversized_turn_is_refused_and_nothing_is_stored(engine: Engine) -> None:
    huge = "x" * (engine.settings.capture.max_turn_chars + 1)
    with pytest.raises(InvalidInput, match="max_turn_chars"):
        engine.capture([Turn("user", "I live in Lyon.", AT, "s", "1"), Turn("user", huge, AT)])
    assert engine.stats().episodes == 0


def test_scope_defaults_and_validation(
    settings: Settings, clock: FixedClock, tmp_path: Path
) -> None:
    scoped = load(settings.home, env={"MEMORACLE_WORKSPACE_AGENT": "main"})
    Engine.init(scoped, clock=clock)
    with Engine.open(scoped, clock=clock) as engine:
        result = engine.capture([Turn("user", "I live in Lyon.", AT)], scope=Scope(chat="tg:1"))
        assert result.added[0].scope == Scope(agent="main", user=None, chat="tg:1")
        with pytest.raises(InvalidInput, match="visibility"):
            engine.capture([Turn("user", "x", AT)], scope=Scope(visibility="public"))


def test_open_without_init_says_what_to_run(settings: Settings) -> None:
    with pytest.raises(WorkspaceError, match="memoracle init"):
        Engine.open(settings)


def test_init_is_idempotent_and_records_openclaw_workspace(
    settings: Settings, clock: FixedClock, tmp_path: Path
) -> None:
    first = Engine.init(settings, clock=clock)
    assert Path(first.database).exists() and Path(first.config).exists()
    workspace = tmp_path / "openclaw"
    workspace.mkdir()
    second = Engine.init(settings, clock=clock, openclaw_workspace=workspace)
    assert str(settings.db_path) not in second.created
    reloaded = load(settings.home, env={})
    assert reloaded.files_dir == workspace.resolve()
    assert (workspace / "memory").is_dir()
    with pytest.raises(WorkspaceError, match="not a folder"):
        Engine.init(settings, clock=clock, openclaw_workspace=tmp_path / "missing")


def test_stats_counts(engine: Engine) -> None:
    engine.capture([Turn("user", "I prefer tea. Never run migrations on Friday.", AT, "s", "1")])
    s = engine.stats()
    assert s.episodes == 1 and s.sessions == 1 and s.memories == 2
    assert s.active_by_kind == {"preference": 1, "guardrail": 1}


def test_forget_in_a_turn_is_scoped_to_the_speaker_and_chat(engine: Engine) -> None:
    alice = Scope(user="alice", chat="a")
    engine.capture([Turn("user", "I like tea.", AT, "a", "1")], scope=alice)
    engine.capture([Turn("user", "I like green tea.", AT, "a", "2")], scope=alice)
    bob = Scope(user="bob", chat="b")
    result = engine.capture(
        [Turn("user", "Please forget that I like tea.", AT, "b", "1")], scope=bob
    )
    assert not result.forgotten and "forget:no-match" in result.skipped
    assert len(engine.list_memories(scope=alice)) == 2


def test_forget_in_a_turn_prefers_the_exact_memory_and_refuses_to_guess(engine: Engine) -> None:
    engine.capture([Turn("user", "I like tea.", AT, "s", "1")])
    engine.capture([Turn("user", "I like green tea.", AT, "s", "2")])
    exact = engine.capture([Turn("user", "Forget that I like tea.", AT, "s", "3")])
    assert [m.text for m in exact.forgotten] == ["I like tea."]
    engine.capture([Turn("user", "I like black tea with milk.", AT, "s", "4")])
    vague = engine.capture([Turn("user", "Forget that I like tea.", AT, "s", "5")])
    assert not vague.forgotten and "forget:ambiguous" in vague.skipped


def test_capture_many_is_all_or_nothing(engine: Engine) -> None:
    ok = ([Turn("user", "I live in Lyon.", AT, "s", "1")], None)
    huge = ([Turn("user", "x" * (engine.settings.capture.max_turn_chars + 1), AT)], None)
    with pytest.raises(InvalidInput):
        engine.capture_many([ok, huge])
    assert engine.stats().episodes == 0


def test_a_due_date_is_labelled_in_the_offset_it_was_said_in(engine: Engine) -> None:
    at = datetime(2026, 5, 14, 10, 20, tzinfo=timezone(timedelta(hours=2)))
    result = engine.capture([Turn("user", "I need to set up backups by Sunday, May 17.", at)])
    task = result.added[0]
    assert task.due_at == datetime(2026, 5, 16, 22, 0, tzinfo=UTC)  # stored in UTC
    assert task.details["dates"][0]["start"].startswith("2026-05-17")
