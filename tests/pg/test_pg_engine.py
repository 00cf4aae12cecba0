"""The engine on PostgreSQL through `storage.url` (engine/backend.py): what `init` and
`open` do with a server, where the files kept beside the store go, recall's vectors
searched in pgvector, and `redact`'s rewrite leaving no old text in the tables' files.
Most tests run on both backends (`any_engine`)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import StoreError, WorkspaceError
from memoracle.recall.fallback import FORGOTTEN_FILE
from memoracle.storage_types import Damage
from memoracle.store.scrub import PLACES, Place
from memoracle.types import Turn

pytestmark = pytest.mark.pg

SECRET = "locker combination 4711-93-kestrel"


def test_init_then_open_on_a_server_keeps_the_files_in_home(
    pg_store_url: str, tmp_path: Path, clock: FixedClock
) -> None:
    settings = load(
        tmp_path / "home",
        env={},
        overrides={"storage.url": pg_store_url, "embedding.model": "hash"},
    )
    with pytest.raises(WorkspaceError, match="memoracle init"):
        Engine.open(settings, clock=clock)  # not initialised: HOME holds nothing yet
    report = Engine.init(settings, clock=clock)
    assert report.database.startswith("postgresql://") and "/migrated" in report.database
    assert not settings.db_path.exists()  # no SQLite file beside it
    assert (settings.home / "backups").is_dir() and settings.config_path.is_file()
    again = Engine.init(settings, clock=clock)  # safe to run again, on every host
    assert report.database in again.created or not again.created
    with Engine.open(settings, clock=clock) as engine:
        memory, _ = engine.remember("I keep the spare key under the blue pot.")
        assert engine.stats().database == report.database
        assert engine.store_location == report.database
        engine.forget(memory.ref)
    assert (settings.home / FORGOTTEN_FILE).is_file()  # HOME, not beside a file


def test_the_cli_reaches_the_server_named_by_the_environment(
    pg_store_url: str, tmp_path: Path
) -> None:
    env = {
        "MEMORACLE_STORAGE_URL": pg_store_url,
        "MEMORACLE_EMBEDDING_MODEL": "hash",
        "MEMORACLE_NOW": "2023-05-08T13:56:00+00:00",
    }
    home = ["--home", str(tmp_path / "home")]
    assert CliRunner().invoke(main, [*home, "init"], env=env).exit_code == 0
    added = CliRunner().invoke(main, [*home, "remember", "The boiler is serviced in May."], env=env)
    assert added.exit_code == 0, added.output
    found = CliRunner().invoke(main, [*home, "search", "boiler"], env=env)
    assert "boiler is serviced" in found.output
    shown = CliRunner().invoke(main, [*home, "config", "show"], env=env)
    assert "env:MEMORACLE_STORAGE_URL" in shown.output
    assert not (tmp_path / "home" / "memoracle.db").exists()


def test_a_wrong_password_is_a_clear_error_without_it(
    pg_store_url: str, tmp_path: Path, clock: FixedClock
) -> None:
    parts = urlsplit(pg_store_url)
    url = urlunsplit(parts._replace(netloc=f"postgres:hunter22@{parts.hostname}:{parts.port}"))
    settings = load(tmp_path / "home", env={}, overrides={"storage.url": url})
    with pytest.raises(StoreError) as caught:
        Engine.init(settings, clock=clock)
    assert "hunter22" not in str(caught.value) and "password" in str(caught.value)


def test_capture_then_recall_by_meaning_on_both(any_engine: Engine, clock: FixedClock) -> None:
    any_engine.capture([Turn("user", "My daughter Mia starts school in Lisbon.", clock.now())])
    found = any_engine.search("Mia starts school", mode="vector")
    assert found.mode == "vector" and found.hits
    assert any("Lisbon" in h.text for h in found.hits)
    block = any_engine.recall("Mia school")
    assert "Lisbon" in block.text


def _rewrite_everywhere(engine: Engine) -> int:
    """Every stored value holding SECRET rewritten without it (what `redact` plans)."""
    changes: dict[Place, list[tuple[int, str]]] = {}
    for place in PLACES:
        rows = [
            (key, value.replace(SECRET, "[REDACTED]"))
            for key, value in engine.stored_texts(place)
            if SECRET in value
        ]
        if rows:
            changes[place] = rows
    assert changes
    return engine.rewrite_texts(changes, now=engine.clock.now(), actor="test")


def test_a_rewrite_leaves_no_copy_in_a_row_or_in_search_on_both(any_engine: Engine) -> None:
    memory, _ = any_engine.remember(f"The {SECRET} is for the gym.")
    any_engine.reindex()
    _rewrite_everywhere(any_engine)
    for place in PLACES:
        assert not any(SECRET in v for _, v in any_engine.stored_texts(place)), place.name
    assert not any_engine.search("kestrel", mode="lexical").hits
    stored = any_engine.stored_memory(memory.id)
    assert stored is not None and stored.text == "The [REDACTED] is for the gym."
    assert any_engine.search("REDACTED gym", mode="lexical").hits  # found by its new text


def test_on_postgresql_the_old_text_leaves_the_tables_files(
    on_postgres: str, pg_server: object, tmp_path: Path, clock: FixedClock
) -> None:
    """An UPDATE leaves the old row version in the table until VACUUM: `secure_delete`
    after the rewrite (VACUUM FULL) must leave no page of the database holding it."""
    import psycopg

    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.capture([Turn("user", f"Note: the {SECRET} opens box 12.", clock.now())])
        engine.remember(f"The {SECRET} is for the gym.")
        _rewrite_everywhere(engine)
    with psycopg.connect(on_postgres, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # every page on disk
        (oid,) = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
        with pytest.raises(psycopg.Error, match="append-only"):
            conn.execute("UPDATE audit SET actor = 'x'")  # the log's wall is back
    folder = pg_server.folder / "data" / "base" / str(oid)  # type: ignore[attr-defined]
    holding = [p.name for p in folder.iterdir() if SECRET.encode() in p.read_bytes()]
    assert holding == []


def test_recover_refuses_a_server_store_and_doctor_examines_the_open_engine(
    pg_store_url: str, tmp_path: Path, clock: FixedClock
) -> None:
    from memoracle.jobs import doctor, recover

    settings = load(tmp_path / "home", env={}, overrides={"storage.url": pg_store_url})
    Engine.init(settings, clock=clock)
    for attempt in (
        lambda: recover.examine(settings),
        lambda: recover.plan(settings, Damage("missing", "gone")),
    ):
        with pytest.raises(WorkspaceError, match="SQLite file only") as caught:
            attempt()
        assert "***" in str(caught.value)  # the URL, its password masked
    result = doctor.run(settings, clock, fix=True)  # the open engine's doctor
    assert result.report is not None
    assert not settings.db_path.exists()  # nothing rebuilt beside the server
