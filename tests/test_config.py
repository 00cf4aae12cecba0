from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.config import load
from memoracle.config_file import render_toml
from memoracle.errors import InvalidInput


def test_defaults_match_the_spec(tmp_path: Path) -> None:
    s = load(tmp_path, env={})
    assert s.recall.budget_tokens == 2000
    assert (s.recall.guardrail_share, s.recall.fresh_share, s.recall.search_share) == (
        0.1,
        0.3,
        0.6,
    )
    assert s.search.rrf_k == 60 and s.search.mmr_lambda == 1.0
    assert s.search.activation_threshold == 0.15
    assert s.decay.half_life_days == 30 and math.isinf(s.decay.half_life_by_kind["guardrail"])
    assert s.lifecycle.prune_threshold == 0.05 and s.lifecycle.max_facts == 10_000
    assert s.lifecycle.dedup_threshold == 0.65
    assert (s.render.memory_md_max_lines, s.render.memory_md_max_chars) == (200, 10_000)
    assert all(source == "default" for _, _, source, _ in s.items())


def test_layers_file_then_env_then_flags(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        "[recall]\nbudget_tokens = 1000\nboost = 0.2\n"
        "[decay]\nhalf_life_by_kind = { decision = 60.0 }\n"
    )
    s = load(
        tmp_path,
        env={"MEMORACLE_RECALL_BUDGET_TOKENS": "1500", "MEMORACLE_CAPTURE_LANGUAGES": "en, ru"},
        overrides={"recall.budget_tokens": 1200},
    )
    assert s.recall.budget_tokens == 1200
    assert s.recall.boost == 0.2
    assert s.capture.languages == ["en", "ru"]
    assert s.decay.half_life_by_kind == {"decision": 60.0}
    sources = {k: src for k, _, src, _ in s.items()}
    assert sources["recall.budget_tokens"] == "flag"
    assert sources["recall.boost"].startswith("file:")
    assert sources["capture.languages"] == "env:MEMORACLE_CAPTURE_LANGUAGES"


def test_home_from_env(tmp_path: Path) -> None:
    assert load(env={"MEMORACLE_HOME": str(tmp_path)}).home == tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[recall\n", "not valid TOML"),
        ("[nope]\nx = 1\n", r"unknown section \[nope\]"),
        ("[recall]\nbudget = 1\n", "unknown key recall.budget"),
        ("[recall]\nbudget_tokens = 'many'\n", "recall.budget_tokens: bad value"),
        ("[workspace]\nday_first = 'perhaps'\n", "workspace.day_first: bad value"),
    ],
)
def test_bad_config_file_names_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(InvalidInput, match=message) as info:
        load(tmp_path, env={})
    assert "config.toml" in str(info.value)


def test_bad_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="MEMORACLE_RECALL_BOOST"):
        load(tmp_path, env={"MEMORACLE_RECALL_BOOST": "lots"})


def test_unknown_override_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="Unknown setting"):
        load(tmp_path, env={}, overrides={"recall.nope": 1})


def test_rendered_template_is_valid_toml_and_complete(tmp_path: Path) -> None:
    s = load(tmp_path, env={})
    text = render_toml(s)
    assert all(table == {} for table in tomllib.loads(text).values())  # all commented out
    setting = re.compile(r"^# (\w+) = ")
    uncommented = "\n".join(line[2:] if setting.match(line) else line for line in text.splitlines())
    (tmp_path / "config.toml").write_text(uncommented)
    from_file = load(tmp_path, env={})
    assert [(k, v) for k, v, *_ in from_file.items()] == [(k, v) for k, v, *_ in s.items()]
    assert all(src.startswith("file:") for _, _, src, _ in from_file.items())


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[decay]\nhalf_life_days = 0\n", "decay.half_life_days"),
        ("[decay]\nhalf_life_days = -1\n", "decay.half_life_days"),
        ("[decay]\nhalf_life_days = nan\n", "decay.half_life_days"),
        ("[search]\nrecency_half_life_days = 0\n", "search.recency_half_life_days"),
        ("[search]\nk = 0\n", "search.k"),
        ("[search]\nmmr_lambda = 7\n", "search.mmr_lambda"),
        ("[search]\nvector_weight = inf\n", "search.vector_weight"),
        ("[lifecycle]\nmax_facts = 0\n", "lifecycle.max_facts"),
        ("[lifecycle]\nsuperseded_retention_days = -5\n", "lifecycle.superseded_retention_days"),
        ('[capture]\nlanguages = ["xx", 5]\n', "capture.languages"),
        ('[schedule]\nnightly = "every day"\n', "schedule.nightly"),
        ('[embedding]\nprovider = "magic"\n', "embedding.provider"),
        ("[health]\ndisk_warn_percent = 180\n", "health.disk_warn_percent"),
        ("[decay.half_life_by_kind]\nfact = -3\n", "decay.half_life_by_kind"),
        ("[decay.half_life_by_kind]\nnope = 3\n", "decay.half_life_by_kind"),
        ('[workspace]\ntimezone = "Mars/Olympus"\n', "workspace.timezone"),
        (
            "[recall]\nguardrail_share = 0.9\nfresh_share = 0.9\nsearch_share = 0.9\n",
            "recall.guardrail_share",
        ),
    ],
)
def test_a_value_out_of_range_is_refused_naming_the_key(
    tmp_path: Path, toml: str, key: str
) -> None:
    (tmp_path / "config.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path, env={})
    assert key in str(caught.value)


def test_the_message_names_where_the_value_came_from_and_what_is_allowed(
    tmp_path: Path,
) -> None:
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path, env={"MEMORACLE_DECAY_HALF_LIFE_DAYS": "0"})
    message = str(caught.value)
    assert "MEMORACLE_DECAY_HALF_LIFE_DAYS" in message and "'0'" in message
    assert "decay.half_life_days" in message and "> 0" in message


def test_every_default_is_allowed_and_infinite_half_lives_still_are(tmp_path: Path) -> None:
    settings = load(tmp_path, env={"MEMORACLE_DECAY_HALF_LIFE_BY_KIND": "decision=inf"})
    assert settings.decay.half_life_by_kind == {"decision": math.inf}


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from([key for key, *_ in load(Path("/nonexistent"), env={}).items()]),
    raw=st.text(max_size=20) | st.integers().map(str) | st.floats().map(str),
)
def test_any_environment_value_loads_or_is_refused_cleanly(key: str, raw: str) -> None:
    var = "MEMORACLE_" + key.replace(".", "_").upper()
    if "\x00" in raw:
        return  # the environment cannot hold it
    try:
        load(Path("/nonexistent"), env={var: raw})
    except InvalidInput as exc:
        assert key in str(exc) or var in str(exc)


def test_storage_url_from_the_file_or_the_environment_its_password_never_shown(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.toml").write_text(
        '[storage]\nurl = "postgresql://mem:s3cret@db.example:5432/memory"\n', encoding="utf-8"
    )
    settings = load(tmp_path, env={})
    assert settings.storage.url == "postgresql://mem:s3cret@db.example:5432/memory"
    shown = {key: value for key, value, *_ in settings.items()}
    assert shown["storage.url"] == "postgresql://mem:***@db.example:5432/memory"
    env = {"MEMORACLE_STORAGE_URL": "postgres://fleet:pw@10.0.0.5/agents"}
    assert load(tmp_path, env=env).storage.url == "postgres://fleet:pw@10.0.0.5/agents"
    assert load(tmp_path, env=env).sources["storage.url"] == "env:MEMORACLE_STORAGE_URL"
    assert load(tmp_path / "empty", env={}).storage.url == ""  # the SQLite file


@pytest.mark.parametrize(
    "url", ["mysql://mem:s3cret@db/memory", "db.example:5432", "postgresql://mem:s3cret@ db/x"]
)
def test_a_storage_url_that_is_no_postgresql_url_is_refused_naming_the_field(
    tmp_path: Path, url: str
) -> None:
    (tmp_path / "config.toml").write_text(f'[storage]\nurl = "{url}"\n', encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        load(tmp_path, env={})
    message = str(caught.value)
    assert "config.toml: storage.url" in message and "postgres" in message
    assert "s3cret" not in message
    with pytest.raises(InvalidInput, match="environment variable MEMORACLE_STORAGE_URL"):
        load(tmp_path / "other", env={"MEMORACLE_STORAGE_URL": url})
