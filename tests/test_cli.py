from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.engine import Engine


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def run(home: Path, *args: str, input: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--home", str(home), *args], input=input)
    assert result.exit_code == code, result.output
    # Anything but a clean exit is a traceback the user would have seen.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


def test_every_command_has_help_with_an_example() -> None:
    def walk(cmd: click.Command, path: list[str]) -> None:
        out = CliRunner().invoke(main, [*path, "--help"])
        assert out.exit_code == 0, path
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk(sub, [*path, name])
        elif path and path != ["demo"]:
            assert "Example" in out.output, path

    walk(main, [])


def test_missing_workspace_is_one_clear_line(home: Path) -> None:
    out = run(home, "list", code=2)
    assert "No memoracle workspace" in out and "memoracle init" in out


def test_init_capture_list_get_json(home: Path) -> None:
    assert "created" in run(home, "init")
    out = json.loads(
        run(
            home,
            "capture",
            "--user",
            "I prefer dark mode. Never push to main.",
            "--session",
            "s",
            "--turn",
            "1",
            "--at",
            "2026-05-14T10:02:00+02:00",
            "--json",
        )
    )
    assert {m["kind"] for m in out["added"]} == {"preference", "guardrail"}
    first = out["added"][0]
    assert (
        first["id"].startswith("m_")
        and first["dates"]["observed_at"] == "2026-05-14T08:02:00+00:00"
    )
    assert first["provenance"]["episodes"] == out["episodes"][:1]
    assert first["rule"]
    again = json.loads(
        run(
            home,
            "capture",
            "--user",
            "I prefer dark mode.",
            "--session",
            "s",
            "--turn",
            "1",
            "--json",
        )
    )
    assert again["duplicate_turn"] is True
    listed = json.loads(run(home, "list", "--json"))
    assert listed["version"] == 1 and len(listed["memories"]) == 2
    got = json.loads(run(home, "get", first["id"], "--json"))["memory"]
    assert got["provenance"]["turns"][0]["text"] == "I prefer dark mode. Never push to main."
    assert "guardrail" in run(home, "list", "--kind", "guardrail")


def test_capture_from_stdin_single_and_list(home: Path) -> None:
    run(home, "init")
    one = json.loads(
        run(
            home,
            "capture",
            "--json",
            input='{"user": "Я живу в Лионе.", "at": "2023-05-08T10:00:00Z"}',
        )
    )
    assert one["added"][0]["lang"] == "ru"
    many = json.loads(
        run(
            home,
            "capture",
            "--json",
            input=json.dumps([{"user": "I love jazz."}, {"assistant": "HEARTBEAT_OK"}]),
        )
    )
    assert len(many["results"]) == 2
    assert many["results"][1]["skipped"] == ["noise:heartbeat_ok"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "stdin: not valid JSON at line 1"),
        ("[]", "empty list"),
        ('[{"user": "hi"}, 5]', "stdin item 1: expected an object"),
        ('{"user": "hi", "colour": "red"}', "unknown field(s) colour"),
        ('{"user": 5}', "field 'user' must be a string"),
        ('{"at": "2023-01-01"}', "needs 'user' and/or 'assistant'"),
        ('{"user": "hi", "at": "yesterday"}', "not an ISO-8601"),
    ],
)
def test_capture_stdin_errors_name_the_field(home: Path, payload: str, message: str) -> None:
    run(home, "init")
    assert message in run(home, "capture", input=payload, code=1)
    assert json.loads(run(home, "stats", "--json"))["episodes"] == 0


def test_now_option_sets_the_clock(home: Path) -> None:
    run(home, "init")
    out = json.loads(
        run(
            home,
            "--now",
            "2023-05-08T12:00:00Z",
            "capture",
            "--user",
            "I went hiking yesterday.",
            "--json",
        )
    )
    event = out["added"][0]
    assert event["dates"]["observed_at"].startswith("2023-05-08T12:00")
    assert event["dates"]["valid_from"].startswith("2023-05-07")
    assert "not an ISO-8601" in run(home, "--now", "soon", "list", code=2)


def test_remember_forget_stats(home: Path) -> None:
    run(home, "init")
    out = json.loads(
        run(home, "remember", "Staging is staging.internal:8443", "--kind", "fact", "--json")
    )
    ref = out["memory"]["id"]
    assert "would forget" in run(home, "forget", "--query", "staging", "--dry-run")
    assert "forgot" in run(home, "forget", ref)
    assert json.loads(run(home, "get", ref, "--json"))["memory"]["status"] == "forgotten"
    assert "Give exactly one" in run(home, "forget", code=1)
    stats = json.loads(run(home, "stats", "--json"))
    assert stats["by_status"] == {"forgotten": 1}


def test_config_show_reports_sources(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORACLE_RECALL_BUDGET_TOKENS", "1500")
    out = json.loads(run(home, "config", "show", "--json"))
    assert out["settings"]["recall.budget_tokens"] == {
        "value": 1500,
        "source": "env:MEMORACLE_RECALL_BUDGET_TOKENS",
    }
    assert out["settings"]["decay.half_life_by_kind"]["value"]["guardrail"] == "inf"
    text = run(home, "config", "show")
    assert "recall.budget_tokens" in text and "env:MEMORACLE_RECALL_BUDGET_TOKENS" in text


def test_ingest_reports_and_fails_only_when_nothing_read(home: Path, tmp_path: Path) -> None:
    run(home, "init")
    good = tmp_path / "chat.jsonl"
    good.write_text(
        '{"role": "user", "content": "I live in Lisbon.", "timestamp": "2026-01-02T10:00:00Z"}\n'
        "{broken\n"
        '{"role": "assistant", "content": "Noted.", "timestamp": "2026-01-02T10:00:05Z"}\n'
    )
    out = run(home, "ingest", str(good), "--json")
    report = json.loads(out[out.index("{") :])
    assert report["files"] == 1 and report["episodes_added"] == 2
    assert any(":2" in w["origin"] for w in report["warnings"])
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)) * 10)
    assert "blob.bin" in run(home, "ingest", str(binary), code=1)
    assert "missing.jsonl" in run(home, "ingest", str(tmp_path / "missing.jsonl"), code=1)


def test_demo_runs_end_to_end(home: Path) -> None:
    out = run(home, "--now", "2026-05-15T09:00:00Z", "demo")
    assert "export MEMORACLE_HOME=" in out
    assert "ingest " in out and "sample-session.jsonl" in out
    assert "[REDACTED" in out
    assert "guardrail" in out


@pytest.mark.slow
def test_every_command_the_demo_prints_runs_as_printed(tmp_path: Path) -> None:
    """The demo's `export` line, then each `$` line and the closing `get`, pasted into a
    shell that has nothing of ours on PATH: each exits 0."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    home = tmp_path / "demo-home"
    demo = subprocess.run(
        [sys.executable, "-m", "memoracle.cli", "--home", str(home), "demo"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    lines = demo.splitlines()
    export = next(line.strip() for line in lines if line.strip().startswith("export "))
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    commands.append(demo.rsplit("Look closer: ", 1)[1].strip())
    assert len(commands) == 9
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", f"{export}\n{command}"], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, (command, done.stderr)


def test_set_flag_overrides_a_setting(home: Path) -> None:
    out = json.loads(run(home, "--set", "recall.budget_tokens=1200", "config", "show", "--json"))
    assert out["settings"]["recall.budget_tokens"] == {"value": 1200, "source": "flag"}
    assert "Unknown setting" in run(home, "--set", "recall.nope=1", "config", "show", code=1)
    assert "KEY=VALUE" in run(home, "--set", "oops", "config", "show", code=2)


def test_bad_input_is_one_clear_message_and_nothing_is_lost(home: Path, tmp_path: Path) -> None:
    run(home, "init")
    run(home, "capture", "--user", "I live in Lyon.")
    huge = json.dumps({"user": "x" * 10_000_000})
    assert "over the limit" in run(home, "capture", input=huge, code=1)
    assert "stdin is empty" in run(home, "capture", input="  \n", code=1)
    for name, content in {"empty.jsonl": b"", "latin1.jsonl": "café".encode("latin-1")}.items():
        (tmp_path / name).write_bytes(content)
        assert name in run(home, "ingest", str(tmp_path / name), code=1)
    stats = json.loads(run(home, "stats", "--json"))
    assert (stats["memories"], stats["episodes"]) == (1, 1)


def test_unwritable_home_is_refused_with_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = run(blocker / "home", "init", code=1)
    assert "Cannot create the workspace" in out and str(blocker) in out


def test_home_after_the_command_name(tmp_path: Path) -> None:
    home = tmp_path / "after"
    out = CliRunner().invoke(main, ["init", "--home", str(home)])
    assert out.exit_code == 0, out.output
    assert (home / "memoracle.db").exists()
    listed = CliRunner().invoke(main, ["list", "--home", str(home), "--json"])
    assert json.loads(listed.output)["memories"] == []


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_recall_without_a_usable_database_reads_the_markdown_files(home: Path, damage: str) -> None:
    run(home, "init")
    notes = home / "workspace"
    (notes / "memory").mkdir(parents=True, exist_ok=True)
    (notes / "MEMORY.md").write_text("# Memory\n\n- Never deploy on Fridays.\n- Anna likes tea.\n")
    (notes / "memory" / "2026-11-30.md").write_text("- Moved the deploy window to Tuesday.\n")
    db = home / "memoracle.db"
    for part in home.glob("memoracle.db*"):
        part.unlink()
    if damage == "corrupt":
        db.write_bytes(b"this is not a database" * 100)
    result = CliRunner().invoke(
        main, ["--home", str(home), "recall", "when can we deploy?", "--budget", "200"]
    )
    assert result.exit_code == 0, result.output
    assert "[MEMORY.md:3] Never deploy on Fridays." in result.stdout
    assert "[memory/2026-11-30.md:1 2026-11-30] Moved the deploy window" in result.stdout
    assert "Anna" not in result.stdout
    assert "database unavailable" in result.stderr and "MEMORY.md" in result.stderr
    as_json = CliRunner().invoke(
        main, ["--home", str(home), "recall", "deploy", "--budget", "12", "--json"]
    )
    tokens = json.loads(as_json.stdout)["tokens"]
    assert 0 < tokens <= 12
    if damage == "corrupt":
        assert db.read_bytes().startswith(b"this is not a database")  # left as it was


def test_score_ranks_and_marks_promotion_candidates(home: Path) -> None:
    run(home, "init")
    run(home, "remember", "We decided to use Postgres 16 for Billing.", "--kind", "decision")
    run(home, "remember", "I went to the market.", "--kind", "event")
    text = run(home, "score")
    assert "2 active memories; 1 to promote" in text
    lines = [line for line in text.splitlines() if "m_" in line]
    assert "*" in lines[0] and "Postgres" in lines[0] and "market" in lines[1]
    out = json.loads(run(home, "--now", "2099-01-01", "score", "--json"))
    assert out["memories"] == 2 and out["promote"] == 0  # unused for 70 years: all faded
    first = out["ranking"][0]
    assert first["factors"]["kind_weight"] == 3.0 and first["factors"]["recency"] < 0.01


def test_pending_and_resolve(home: Path) -> None:
    run(home, "init")
    run(home, "capture", "--user", "I live in Paris.")
    run(home, "capture", "--user", "I might move to Lyon.")
    text = run(home, "pending")
    assert "I live in Paris" in text and "disputed by" in text and "Lyon" in text
    ref = json.loads(run(home, "pending", "--json"))["pending"][0]["memory"]["id"]
    assert "Say --confirm" in run(home, "resolve", ref, code=1)
    out = json.loads(run(home, "resolve", ref, "--reject", "--json"))
    assert out["memory"]["status"] == "superseded"
    assert run(home, "pending").strip() == "nothing pending"
    assert "not disputed" in run(home, "resolve", ref, "--confirm", code=1)


def test_archive_restore_and_nightly(home: Path) -> None:
    run(home, "--now", "2026-01-01T09:00", "init")
    out = json.loads(
        run(home, "--now", "2026-01-01T09:00", "remember", "I went to the fair.", "--json")
    )
    ref = out["memory"]["id"]
    assert "Say --dry-run" in run(home, "archive", code=1)
    later = ("--now", "2026-09-01T09:00")
    assert "would archive 1 memory" in run(home, *later, "archive", "--dry-run")
    applied = json.loads(run(home, *later, "archive", "--apply", "--json"))
    assert applied["archived"] == [{"id": ref, "reason": "below_threshold", "score": 0.0036}]
    assert Path(applied["backup"]).exists()
    assert "I went to the fair." in run(home, "restore", ref)
    report = json.loads(run(home, *later, "nightly", "--dry-run", "--json"))
    assert report["dry_run"] and report["memory_md"]["changed"]
    assert "MEMORY.md" in run(home, *later, "nightly")
    assert (home / "workspace" / "MEMORY.md").exists()


def test_nightly_dry_run_prints_each_change_and_the_diff_of_each_file(home: Path) -> None:
    at = ("--now", "2026-01-01T09:00")
    run(home, *at, "init")
    run(home, *at, "remember", "Never deploy on Fridays.", "--kind", "guardrail")
    run(home, *at, "remember", "I went to the fair.", "--kind", "event")
    fresh = ("--now", "2026-08-30T09:00")  # the event will have faded, these not
    run(home, *fresh, "remember", "Anna lives in Lyon.", "--kind", "fact")
    run(home, *fresh, "remember", "Anna lives in Lyon since 2021.", "--kind", "fact")
    later = ("--now", "2026-09-01T09:00")
    text = run(home, *later, "nightly", "--dry-run")
    assert "archive m_2 (below_threshold): I went to the fair." in text
    assert "merge   m_3 into m_4" in text
    assert "+++ " + str(home / "workspace" / "MEMORY.md") in text
    assert "+- Never deploy on Fridays. <!-- m_1 -->" in text
    assert "(dry run)" in text
    assert not (home / "workspace" / "MEMORY.md").exists()
    report = json.loads(run(home, *later, "nightly", "--dry-run", "--json"))
    assert report["duplicates"] == [{"keep": "m_4", "merge": ["m_3"]}]
    assert any(c["path"].endswith("MEMORY.md") for c in report["changes"])


def test_health_after_a_nightly_run_reports_it_and_exits_by_status(
    home: Path, tmp_path: Path
) -> None:
    run(home, "init")
    run(home, "remember", "Never deploy on Fridays.", "--kind", "guardrail")
    assert "[nightly_missing]" in run(home, "health", code=1)
    run(home, "nightly")
    body = json.loads((home / "health.json").read_text())
    assert body["status"] == "healthy" and body["last_nightly"]["status"] == "ok"
    out = json.loads(run(home, "health", "--json", "--output-dir", str(tmp_path / "out")))
    assert out["memories"]["active"] == 1 and out["warnings"] == []
    assert (tmp_path / "out" / "health.json").exists()
    assert "<svg" in (tmp_path / "out" / "activation.svg").read_text()
    history = (home / "health-history.jsonl").read_text().splitlines()
    assert len(history) == 3  # the check that warned, the nightly run's, the last one


def test_pointers_and_canaries(home: Path) -> None:
    run(home, "init")
    notes = home / "workspace" / "memory"
    (notes / "projects.md").write_text("- Travel → memory/travel.md\n- [ok](projects.md)\n")
    assert run(home, "pointers", "--quiet", code=1) == "memory/projects.md:1 -> memory/travel.md\n"
    (notes / "travel.md").write_text("# Travel\n")
    assert "2 pointer(s) in" in run(home, "pointers") and "0 broken" in run(home, "pointers")
    run(home, "remember", "The staging database is on db2.")
    assert "expects 'db2'" in run(home, "canary", "add", "staging database", "--expect", "db2")
    assert "already" in run(home, "canary", "add", "staging database", "--expect", "db2", code=1)
    body = json.loads(run(home, "health", "--probe", "--json", code=1))
    assert body["canary"]["passed"] == 1 and body["pointers"]["broken_count"] == 0


def test_graph_entities_relations_and_show(home: Path) -> None:
    run(home, "init")
    run(home, "remember", "My wife Anna works at Acme.")
    assert "Person         Anna  (anna)" in run(home, "graph", "entities")
    assert "anna works_at acme" in run(home, "graph", "relations")
    shown = json.loads(run(home, "graph", "show", "Anna's", "--json"))
    assert shown["entity"]["key"] == "anna" and shown["memories"][0]["id"] == "m_1"
    assert "No entity named 'Bob'" in run(home, "graph", "show", "Bob", code=1)


def test_dedup_check_fix_and_query(home: Path, tmp_path: Path) -> None:
    run(home, "init")
    run(home, "remember", "Anna lives in Lyon.", "--kind", "fact")
    run(home, "remember", "Team meeting on May 3 in room B.", "--kind", "event")
    # Saying more is stored as news; another date is another meeting.
    run(home, "remember", "Anna lives in Lyon since 2021.", "--kind", "fact")
    run(home, "remember", "Team meeting on May 5 in room B.", "--kind", "event")
    # The same words again, reordered, is merged as it is captured.
    again = json.loads(run(home, "remember", "Since 2021 Anna lives in Lyon.", "--json"))
    assert not again["inserted"]
    checked = json.loads(run(home, "dedup", "--check", "--json"))
    assert len(checked["groups"]) == 1 and len(checked["groups"][0]["merge"]) == 1
    assert "Say one of" in run(home, "dedup", code=2)

    assert "duplicate of" in run(home, "dedup", "--query", "anna lives in lyon since 2021")
    assert "new" in run(home, "dedup", "--query", "Team meeting on May 9 in room B.", code=1)
    batch = tmp_path / "batch.txt"
    batch.write_text("Anna lives in Lyon since 2021\nI bought a kayak\n")
    lines = run(home, "dedup", "--query-batch", str(batch), "--json", code=1).splitlines()
    assert [json.loads(line)["duplicate"] for line in lines] == [True, False]

    fixed = json.loads(run(home, "dedup", "--fix", "--json"))
    assert fixed["fixed"] and Path(fixed["backup"]).exists()
    statuses = {m["text"]: m["status"] for m in json.loads(
        run(home, "list", "--status", "all", "--json"))["memories"]}  # fmt: skip
    assert sorted(statuses.values()) == ["active", "active", "active", "superseded"]
    assert json.loads(run(home, "dedup", "--check", "--json"))["groups"] == []


def test_doctor_explains_and_health_fix_fixes(home: Path) -> None:
    run(home, "init")
    run(home, "remember", "Marc works at Ikea.")
    out = run(home, "doctor", code=1)
    assert "[nightly_missing]" in out and "why: Without the nightly run" in out
    assert "fix: memoracle nightly, and schedule it (`memoracle health --fix` runs it)" in out
    assert not (home / "health.json").exists()  # doctor only reads
    findings = json.loads(run(home, "doctor", "--json", code=1))["findings"]
    assert {f["code"] for f in findings} == {"nightly_missing", "vectors_missing"}
    assert all(f["automatic"] and f["why"] and f["fix"] for f in findings)
    assert "healthy (0 warning(s))" in run(home, "health", "--fix")
    assert "Every check passed" in run(home, "doctor")


@pytest.mark.slow
def test_the_nightly_run_appends_the_graph_log_and_graph_compact_rewrites_it(
    home: Path,
) -> None:
    run(home, "init")
    run(home, "remember", "My wife Anna works at Acme.")
    run(home, "nightly")
    log = home / "workspace" / "knowledge-graph" / "graph-log.jsonl"
    first = log.read_text()
    assert '"key":"anna"' in first and '"relation":"works_at"' in first
    run(home, "forget", "m_1")
    run(home, "remember", "Anna works at Acme now, and she likes it.")
    run(home, "nightly")
    assert log.read_text().startswith(first)  # appended, never rewritten
    dry = json.loads(run(home, "graph", "compact", "--dry-run", "--min-gain", "0", "--json"))
    assert dry["dry_run"] and not dry["compacted"] and dry["gain"] > 0
    assert log.read_text().startswith(first)
    out = run(home, "graph", "compact", "--min-gain", "0")
    assert out.startswith("compacted ") and "backups" in out
    assert "left as it is" in run(home, "graph", "compact")  # nothing left to gain


@pytest.mark.parametrize(
    "args",
    [
        ["--now", "9999-12-31T23:59:59-12:00", "capture", "--user", "I moved to Lyon"],
        ["--now", "0001-01-01T00:00:00+14:00", "nightly"],
        ["capture", "--user", "I moved to Lyon yesterday", "--at", "9999-12-31T23:00"],
        ["search", "where do I live", "--as-of", "0001-01-01"],
    ],
)
def test_times_at_the_calendars_ends_are_refused_not_a_traceback(
    tmp_path: Path, args: list[str]
) -> None:
    home = tmp_path / "home"
    run(home, "init")
    assert "out of range" in run(home, *args, code=2)  # exit 2, no traceback


NESTED = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_json_is_refused_or_skipped_never_a_traceback(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "init")
    assert "nested too deeply" in run(home, "capture", input=NESTED, code=1)
    # a turn whose text is such brackets is stored as said, not taken for a tool call
    run(home, "capture", input=json.dumps({"user": NESTED}))
    lines = tmp_path / "turns.jsonl"
    good = {"role": "user", "content": "I live in Lyon", "timestamp": "2026-01-01T00:01:00Z"}
    lines.write_text(f"{json.dumps(good)}\n{NESTED}\n", encoding="utf-8")
    out = run(home, "ingest", str(lines))
    assert "1 new episodes" in out and "turns.jsonl:2: not valid JSON (nested too deeply)" in out
    export = tmp_path / "export.jsonl"
    run(home, "export", str(export))
    header = export.read_text(encoding="utf-8").splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f"{header}\n{NESTED}\n", encoding="utf-8")
    other = tmp_path / "other"
    run(other, "init")
    assert "bad.jsonl:2: not JSON (nested too deeply)" in run(other, "import", str(bad), code=1)


def test_a_memory_line_names_its_subject_once(engine: Engine) -> None:
    from dataclasses import replace
    from datetime import UTC

    from memoracle.cli.context import memory_line

    memory, _ = engine.remember("I run Debian 13.")
    said = replace(memory, text="Lena: I run Debian 13.", subject="Lena")
    assert "Lena: Lena:" not in memory_line(said, UTC)
    assert "Lena: I run Debian 13." in memory_line(replace(memory, subject="Lena"), UTC)
    named = replace(memory, text="The Atlas project uses Postgres.", subject="The Atlas project")
    assert "The Atlas project: The Atlas" not in memory_line(named, UTC)
    assert "user:" not in memory_line(replace(memory, subject="user"), UTC)
