"""`memoracle doctor`'s advice and `health --fix`'s fixes."""

from __future__ import annotations

import re
from pathlib import Path

from memoracle.engine import Engine
from memoracle.jobs import doctor, health, nightly


def test_every_warning_health_can_raise_has_advice() -> None:
    source = Path(health.__file__).read_text(encoding="utf-8")
    codes = set(re.findall(r"\bwarn\(\s*\"([a-z_]+)\"", source))
    assert len(codes) > 15  # the pattern finds them: a change in style would hide them
    assert codes <= set(doctor.ADVICE), codes - set(doctor.ADVICE)


def test_explain_pairs_each_warning_with_why_and_how(engine: Engine) -> None:
    engine.remember("Marc works at Ikea.", kind="fact")
    findings = doctor.explain(health.check(engine))
    by_code = {f.warning.code: f.advice for f in findings}
    assert set(by_code) == {"vectors_missing", "nightly_missing"}
    assert by_code["vectors_missing"].fix == "memoracle reindex"
    assert by_code["vectors_missing"].automatic


def test_fix_runs_the_safe_fixes_and_the_next_check_is_clean(engine: Engine) -> None:
    engine.remember("Marc works at Ikea.", kind="fact")
    engine.remember("Marc works at Ikea in Lyon since May 2020.", kind="fact")
    engine.record_run("nightly", {"milliseconds": 10})  # not overdue: fixes run one by one
    report = health.check(engine)
    assert {w.code for w in report.warnings} == {"vectors_missing", "duplicates_high"}
    done = doctor.fix(engine, report)
    assert done[0] == "reindex: 2 texts embedded"
    assert done[1].startswith("dedup: 1 memories merged (backup ")
    assert health.check(engine).warnings == ()
    assert doctor.fix(engine, health.check(engine)) == []  # nothing left to fix


def test_an_overdue_nightly_run_is_the_one_fix(engine: Engine) -> None:
    engine.remember("Marc works at Ikea.", kind="fact")
    (done,) = doctor.fix(engine, health.check(engine))
    assert done.startswith(f"nightly: {len(nightly.STEPS)} steps run")
    assert health.check(engine).warnings == ()
