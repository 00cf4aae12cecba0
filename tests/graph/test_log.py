"""The graph log: appended with what the store's graph changed, replayed into a state,
compacted safely (backup, temp file, validation, atomic rename), and left whole by a
compaction that fails, is interrupted or is killed at any point before its rename."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.graph import log
from memoracle.jobs import graph_log


def _path(engine: Engine) -> Path:
    return graph_log.log_path(engine.settings)


def _ops(engine: Engine) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _path(engine).read_text().splitlines()]


def _leftovers(engine: Engine) -> list[Path]:
    backups = engine.settings.home / "backups"
    return sorted(
        [*_path(engine).parent.glob(graph_log.TEMP_PREFIX + "*"), *backups.glob("*.partial")]
    )


def _history(engine: Engine, clock: FixedClock) -> None:
    """A log with records that later lines supersede: links of a forgotten memory, an
    entity written again under a new name."""
    anna, _ = engine.remember("My wife Anna works at Acme.")
    engine.remember("Anna's sister Lea lives in Lyon.")
    graph_log.append(engine)
    clock.advance(hours=1)
    engine.forget(anna.ref)
    engine.remember("We use Postgres for billing.")
    graph_log.append(engine)
    with engine._store.transaction():  # Anna seen under another name
        engine._store.graph.entity("anna", "Annie", "Person", now=clock.now())
    graph_log.append(engine)


# -- appending ----------------------------------------------------------------------


def test_the_log_replays_to_the_store_graph_and_appending_twice_writes_once(
    engine: Engine,
) -> None:
    engine.remember("My wife Anna works at Acme.")
    assert not _path(engine).exists()  # the nightly run (or compact) writes it
    first = graph_log.append(engine)
    size = _path(engine).stat().st_size
    again = graph_log.append(engine)

    assert first.appended == 10 and first.lines == 11 and first.bytes == size
    assert (again.appended, again.lines, again.bytes) == (0, 11, size)
    assert _path(engine).stat().st_size == size
    ops = _ops(engine)
    assert ops[0] == {"op": "format", "version": 1}
    assert {"op": "link", "relation": ["anna", "works_at", "acme"], "memory": "m_1"} in ops
    state = graph_log.replay(_path(engine))
    assert state == graph_log.store_state(engine) and graph_log.check(engine) == []
    assert state.entities["anna"] == log.EntityRecord("anna", "Anna", "Person", ("Anna",))
    assert ("anna", "works_at", "acme") in state.relations


def test_forgetting_unlinks_a_new_name_rewrites_the_entity_and_restoring_links_again(
    engine: Engine, clock: FixedClock
) -> None:
    anna, _ = engine.remember("My wife Anna works at Acme.")
    graph_log.append(engine)
    engine.forget(anna.ref)
    with engine._store.transaction():
        engine._store.graph.entity("anna", "Annie", "Person", now=clock.now())
    report = graph_log.append(engine)

    new = _ops(engine)[-report.appended :]
    assert {"op": "unlink", "entity": "acme", "memory": "m_1"} in new
    assert {"op": "unlink", "relation": ["anna", "works_at", "acme"], "memory": "m_1"} in new
    assert {
        "op": "entity",
        "key": "anna",
        "name": "Anna",
        "type": "Person",
        "aliases": ["Anna", "Annie"],
    } in new
    state = graph_log.replay(_path(engine))
    assert state == graph_log.store_state(engine)
    assert state.entity_links == frozenset() and "acme" in state.entities  # kept, unlinked
    with sqlite3.connect(engine.settings.db_path) as db:  # brought back (as a restore does)
        db.execute("UPDATE memories SET status = 'active' WHERE id = ?", (anna.id,))
    assert graph_log.append(engine).appended == 5
    assert graph_log.replay(_path(engine)) == graph_log.store_state(engine)


def test_a_store_restored_from_an_older_copy_removes_what_it_no_longer_has(
    engine: Engine,
) -> None:
    engine.remember("My wife Anna works at Acme.")
    engine.remember("We use Postgres for billing.")
    graph_log.append(engine)
    with sqlite3.connect(engine.settings.db_path) as db:
        for table in ("relation_memories", "relations", "entity_memories", "entity_aliases"):
            db.execute(f"DELETE FROM {table} WHERE {_about_acme(table)}")
        db.execute("DELETE FROM entities WHERE key = 'acme'")
    report = graph_log.append(engine)

    new = _ops(engine)[-report.appended :]
    assert new[-1] == {"op": "remove", "entity": "acme"}
    assert {"op": "remove", "relation": ["anna", "works_at", "acme"]} in new
    state = graph_log.replay(_path(engine))
    assert state == graph_log.store_state(engine) and "acme" not in state.entities
    # a removed entity takes its relations and links along, even unsaid
    lines = _path(engine).read_text().splitlines(keepends=True)
    _path(engine).write_text("".join(lines[: -report.appended]) + lines[-1])
    assert graph_log.replay(_path(engine)) == state


def _about_acme(table: str) -> str:
    acme = "(SELECT id FROM entities WHERE key = 'acme')"
    if table == "relations":
        return f"(source_id = {acme} OR target_id = {acme})"
    if table == "relation_memories":
        return (
            "relation_id IN (SELECT id FROM relations"
            f" WHERE source_id = {acme} OR target_id = {acme})"
        )
    return f"entity_id = {acme}"


def test_a_cut_last_line_is_ignored_by_replay_and_dropped_by_the_next_append(
    engine: Engine,
) -> None:
    engine.remember("My wife Anna works at Acme.")
    graph_log.append(engine)
    whole = _path(engine).read_bytes()
    before = graph_log.replay(_path(engine))
    engine.remember("Anna's sister Lea lives in Lyon.")
    pending = log.diff(before, graph_log.store_state(engine))
    # a writer killed in the middle of its second line: one whole line, then half of one
    cut = "".join(json.dumps(op) + "\n" for op in pending[:2]).encode()[:-20]
    _path(engine).write_bytes(whole + cut)

    state = graph_log.replay(_path(engine))
    assert state.cut_line == 13 and state.lines == 12
    assert set(state.entities) == set(before.entities) | {pending[0]["key"]}
    report = graph_log.append(engine)
    assert report.repaired == 13
    assert _path(engine).read_bytes().endswith(b"\n")
    assert graph_log.replay(_path(engine)) == graph_log.store_state(engine)
    assert graph_log.replay(_path(engine)).cut_line is None
    assert graph_log.append(engine).appended == 0


def test_a_log_cut_inside_its_first_line_is_written_again_with_its_format_line(
    engine: Engine,
) -> None:
    engine.remember("My wife Anna works at Acme.")
    _path(engine).parent.mkdir(parents=True, exist_ok=True)
    _path(engine).write_bytes(b'{"op":"for')
    assert graph_log.replay(_path(engine)).cut_line == 1
    graph_log.append(engine)
    assert _ops(engine)[0] == {"op": "format", "version": 1}
    assert graph_log.replay(_path(engine)) == graph_log.store_state(engine)


# -- replaying ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not JSON"),
        ('["op"]', "not an operation"),
        ('{"op":"merge","entity":"anna"}', "unknown operation 'merge'"),
        ('{"op":"link","entity":"bob","memory":"m_1"}', "entity 'bob' is used before"),
        ('{"op":"link","entity":"anna","memory":"12"}', 'like "m_12"'),
        ('{"op":"link","relation":["anna","knows"],"memory":"m_1"}', "[source, relation"),
        ('{"op":"link","relation":["anna","knows","anna"],"memory":"m_1"}', "before it is"),
        ('{"op":"entity","key":"","name":"X","type":"Person"}', '"key" must be'),
        ('{"op":"format","version":1}', "only be the first line"),
    ],
)
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "graph-log.jsonl"
    path.write_text(
        '{"op":"format","version":1}\n'
        '{"op":"entity","key":"anna","name":"Anna","type":"Person","aliases":["Anna"]}\n'
        f"{line}\n"
        '{"op":"entity","key":"lea","name":"Lea","type":"Person","aliases":["Lea"]}\n'
    )
    with pytest.raises(InvalidInput) as caught:
        graph_log.replay(path)
    assert str(caught.value).startswith(f"{path}:3: ")
    assert message in str(caught.value)
    assert "move the file aside" in str(caught.value)


def test_a_log_from_a_newer_memoracle_is_refused_and_a_missing_one_is_not_found(
    tmp_path: Path,
) -> None:
    path = tmp_path / "graph-log.jsonl"
    path.write_text('{"op":"format","version":2}\n')
    with pytest.raises(InvalidInput, match=r"graph-log.jsonl:1: log format 2 .* newer"):
        graph_log.replay(path)
    with pytest.raises(NotFound, match="No graph log"):
        graph_log.replay(tmp_path / "missing.jsonl")


def test_a_bad_line_stops_an_append_and_leaves_the_log_as_it_was(engine: Engine) -> None:
    engine.remember("My wife Anna works at Acme.")
    graph_log.append(engine)
    lines = _path(engine).read_text().splitlines(keepends=True)
    lines[4] = "garbage\n"
    _path(engine).write_text("".join(lines))
    engine.remember("We use Postgres for billing.")
    with pytest.raises(InvalidInput, match=r"graph-log.jsonl:5: not JSON"):
        graph_log.append(engine)
    assert _path(engine).read_text() == "".join(lines)


def test_check_names_what_the_log_lacks(engine: Engine) -> None:
    engine.remember("My wife Anna works at Acme.")
    graph_log.append(engine)
    engine.remember("We use Postgres for billing.")
    problems = graph_log.check(engine)
    assert "1 entities in the store but not in the log: postgresql" in problems
    assert "1 relations in the store but not in the log: user uses postgresql" in problems
    assert "2 entity links in the store but not in the log: postgresql ← m_2, user ← m_2" in (
        problems
    )
    graph_log.append(engine)
    assert graph_log.check(engine) == []


# -- compacting ---------------------------------------------------------------------


def test_compaction_reports_its_gain_backs_up_and_replays_to_the_same_graph(
    engine: Engine, clock: FixedClock
) -> None:
    _history(engine, clock)
    old = _path(engine).read_bytes()
    state = graph_log.replay(_path(engine))
    report = graph_log.compact(engine)

    assert report.compacted and report.reason is None and not report.dry_run
    new = _path(engine).read_bytes()
    assert (report.bytes_before, report.bytes_after) == (len(old), len(new))
    assert report.gain == round(1 - len(new) / len(old), 4) and report.gain > 0.2
    assert report.lines_after == len(new.splitlines()) < report.lines_before
    assert graph_log.replay(_path(engine)) == state == graph_log.store_state(engine)
    assert (report.entities, report.relations, report.links) == (6, 5, 8)
    assert not any(op["op"] in ("unlink", "remove") for op in _ops(engine))
    assert report.backup == engine.settings.home / "backups" / "graph-log-20230508T145600Z.jsonl"
    assert report.backup.read_bytes() == old
    assert report.checksum == hashlib.sha256(old).hexdigest()
    assert _leftovers(engine) == []
    # the database's own backups are counted apart: none of theirs is touched
    assert sorted(p.name for p in report.backup.parent.iterdir()) == [report.backup.name]


def test_a_gain_below_the_minimum_is_skipped_and_a_compact_log_stays_as_it_is(
    engine: Engine, clock: FixedClock
) -> None:
    _history(engine, clock)
    old = _path(engine).read_bytes()
    skipped = graph_log.compact(engine, min_gain=0.9)
    assert not skipped.compacted and skipped.backup is None
    assert skipped.reason is not None and "below the minimum of 90.0%" in skipped.reason
    assert skipped.bytes_after == skipped.bytes_before == len(old)
    assert _path(engine).read_bytes() == old
    assert list((engine.settings.home / "backups").iterdir()) == []

    assert graph_log.compact(engine).compacted
    again = graph_log.compact(engine, min_gain=0)
    assert not again.compacted and again.reason == "the log is already compact"
    with pytest.raises(InvalidInput, match="between 0 and 1"):
        graph_log.compact(engine, min_gain=5)


def test_a_dry_run_changes_nothing_and_reports_what_the_run_would_do(
    engine: Engine, clock: FixedClock
) -> None:
    _history(engine, clock)
    engine.remember("Anna's sister Lea lives in Paris.")  # not appended yet
    old = _path(engine).read_bytes()
    pending = log.diff(graph_log.replay(_path(engine)), graph_log.store_state(engine))
    dry = graph_log.compact(engine, dry_run=True)
    assert dry.dry_run and not dry.compacted and dry.reason is None
    assert dry.appended == len(pending) > 0
    assert dry.backup is None and _path(engine).read_bytes() == old
    assert list((engine.settings.home / "backups").iterdir()) == []

    done = graph_log.compact(engine)
    assert done.appended == len(pending) and done.compacted
    assert (done.gain, done.bytes_before, done.bytes_after) == (
        dry.gain,
        dry.bytes_before,
        dry.bytes_after,
    )


def test_with_an_empty_graph_there_is_nothing_to_compact(engine: Engine) -> None:
    report = graph_log.compact(engine)
    assert not report.compacted and report.reason is not None and "no graph log" in report.reason
    assert not _path(engine).exists()


@pytest.mark.parametrize(
    ("dropped", "problem"),
    [
        (b'"lyon"', "1 entities in the old log but not in the compacted one: lyon"),
        (b'"key":"lyon"', "it does not read back: "),  # its links name an unknown entity
    ],
)
def test_a_compacted_log_that_would_not_replay_the_same_is_never_swapped_in(
    engine: Engine,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    dropped: bytes,
    problem: str,
) -> None:
    _history(engine, clock)
    old = _path(engine).read_bytes()
    real = graph_log._compacted

    def loses_an_entity(state: log.GraphState) -> bytes:
        lines = real(state).splitlines(keepends=True)
        return b"".join(line for line in lines if dropped not in line)

    monkeypatch.setattr(graph_log, "_compacted", loses_an_entity)
    with pytest.raises(WorkspaceError, match="would not replay to the same graph") as caught:
        graph_log.compact(engine)
    assert problem in str(caught.value) and "Nothing was changed" in str(caught.value)
    assert _path(engine).read_bytes() == old and _leftovers(engine) == []
    monkeypatch.undo()
    assert graph_log.compact(engine).compacted


def test_a_log_that_disagrees_with_the_store_is_named_and_left_alone(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _history(engine, clock)
    engine.remember("Anna's sister Lea lives in Paris.")
    old = _path(engine).read_bytes()

    def lost(path: Path, current: log.GraphState) -> tuple[graph_log.AppendReport, log.GraphState]:
        return graph_log.AppendReport(path, 0, None, 0, len(old)), graph_log.replay(path)

    monkeypatch.setattr(graph_log, "_append", lost)  # an append that wrote nothing
    with pytest.raises(InvalidInput, match="disagrees with the store") as caught:
        graph_log.compact(engine)
    assert "1 entities in the store but not in the log: paris" in str(caught.value)
    assert _path(engine).read_bytes() == old


def _stop_in_backup(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    monkeypatch.setattr(graph_log, "_sha256", stop)  # the copy written, not yet verified


def _stop_in_validation(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    real = graph_log._replay

    def replay(path: Path, **kwargs: Any) -> tuple[log.GraphState, int]:
        if path.name.startswith(graph_log.TEMP_PREFIX):
            stop()
        return real(path, **kwargs)

    monkeypatch.setattr(graph_log, "_replay", replay)


def _stop_at_the_swap(monkeypatch: pytest.MonkeyPatch, stop: Any) -> None:
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst).name == graph_log.LOG_NAME:
            stop()
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)


STOPS = {"backup": _stop_in_backup, "validate": _stop_in_validation, "swap": _stop_at_the_swap}


@pytest.mark.parametrize("point", sorted(STOPS))
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_a_compaction_interrupted_halfway_leaves_the_old_log_whole(
    engine: Engine,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    point: str,
    error: type[BaseException],
) -> None:
    _history(engine, clock)
    old = _path(engine).read_bytes()
    state = graph_log.replay(_path(engine))

    def stop(*args: Any) -> None:
        raise error("interrupted")

    STOPS[point](monkeypatch, stop)
    with pytest.raises(KeyboardInterrupt if error is KeyboardInterrupt else WorkspaceError):
        graph_log.compact(engine)
    monkeypatch.undo()
    assert _path(engine).read_bytes() == old and _leftovers(engine) == []

    clock.advance(seconds=1)
    report = graph_log.compact(engine)
    assert report.compacted and graph_log.replay(_path(engine)) == state


KILLED = textwrap.dedent(
    """
    import os, sys, time
    from datetime import datetime
    from pathlib import Path
    from memoracle.clock import FixedClock
    from memoracle.config import load
    from memoracle.engine import Engine
    from memoracle.jobs import graph_log

    home, now, point, marker = sys.argv[1:5]

    def stop(*args):
        Path(marker).write_text(point)
        time.sleep(120)  # killed here

    if point == "backup":
        graph_log._sha256 = stop
    elif point == "validate":
        real_replay = graph_log._replay
        def replay(path, **kwargs):
            if path.name.startswith(graph_log.TEMP_PREFIX):
                stop()
            return real_replay(path, **kwargs)
        graph_log._replay = replay
    else:
        real_replace = os.replace
        def replace(src, dst):
            if Path(dst).name == graph_log.LOG_NAME:
                stop()
            real_replace(src, dst)
        os.replace = replace
    settings = load(Path(home), env={}, overrides={"embedding.model": "hash"})
    with Engine.open(settings, clock=FixedClock(datetime.fromisoformat(now))) as engine:
        graph_log.compact(engine)
    """
)


@pytest.mark.parametrize("point", sorted(STOPS))
def test_a_compaction_killed_halfway_leaves_the_old_log_whole_and_the_next_one_finishes(
    engine: Engine, clock: FixedClock, tmp_path: Path, point: str
) -> None:
    _history(engine, clock)
    old = _path(engine).read_bytes()
    state = graph_log.replay(_path(engine))
    marker = tmp_path / "stopped"
    args = [str(engine.settings.home), clock.now().isoformat(), point, str(marker)]
    proc = subprocess.Popen([sys.executable, "-c", KILLED, *args], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists(), proc.stderr.read().decode() if proc.stderr else ""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    if proc.stderr:
        proc.stderr.close()

    assert _path(engine).read_bytes() == old  # whole, and the one the store agrees with
    left = _leftovers(engine)
    assert len(left) == 1 and (left[0].suffix == ".partial") == (point == "backup")
    started = time.monotonic()
    report = graph_log.compact(engine)  # the dead process's lock went with it
    assert time.monotonic() - started < graph_log.LOCK_WAIT_SECONDS
    assert report.compacted and report.cleaned == tuple(left)
    assert _leftovers(engine) == [] and graph_log.replay(_path(engine)) == state
    assert report.backup is not None and report.backup.read_bytes() == old


def test_a_writer_holding_the_lock_makes_the_next_one_wait_then_give_up(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.remember("My wife Anna works at Acme.")
    monkeypatch.setattr(graph_log, "LOCK_WAIT_SECONDS", 0.1)
    with graph_log._locked(engine.settings.home):
        with pytest.raises(WorkspaceError, match="Another memoracle process"):
            graph_log.append(engine)
    assert graph_log.append(engine).appended == 10


def test_old_graph_log_backups_are_pruned_and_others_kept(
    engine: Engine, clock: FixedClock
) -> None:
    backups = engine.settings.home / "backups"
    backups.mkdir(exist_ok=True)
    (backups / "memoracle-20230101T000000Z.db").write_text("not ours")
    for n in range(4):
        engine.remember(f"Marc works at Acme{n}.")
        graph_log.append(engine)
        engine.forget(f"m_{n + 1}")
        clock.advance(days=1)
        assert graph_log.compact(engine, min_gain=0).compacted
    names = sorted(p.name for p in backups.iterdir())
    assert names == [
        "graph-log-20230510T135600Z.jsonl",
        "graph-log-20230511T135600Z.jsonl",
        "graph-log-20230512T135600Z.jsonl",
        "memoracle-20230101T000000Z.db",
    ]
