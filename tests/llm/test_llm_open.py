"""open_model from the settings: off by default with no model client imported, the
endpoint held to llm.local_only, the key read from the variable llm.api_key_env names
and never shown, MEMORACLE_LLM_* overrides, and nothing planted leaving the process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_server import (
    FakeModelServer,
    answer,
    anthropic_text,
    anthropic_tool,
    error,
    facts_ask,
    fake_model_server,
)

from memoracle.config import load
from memoracle.errors import EngineError, InvalidInput
from memoracle.llm import ModelUnavailable, RequestRecord, open_model

KEY = "sk-test-" + "Q7w" * 12


def _settings(tmp_path: Path, env: dict[str, str] | None = None, **llm: Any) -> Any:
    overrides = {f"llm.{k}": v for k, v in llm.items()}
    return load(tmp_path / "home", env=env or {}, overrides=overrides)


def test_off_by_default(tmp_path: Path) -> None:
    assert open_model(load(tmp_path / "home", env={})) is None


def test_with_no_model_configured_no_model_client_is_imported(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import memoracle, memoracle.llm, memoracle.cli.main, memoracle.jobs.nightly\n"
        "from memoracle.config import load\n"
        f"assert memoracle.llm.open_model(load({str(tmp_path)!r}, env={{}})) is None\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'jsonschema') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "endpoint", ["http://10.1.2.3:8080/v1", "https://api.example.com/v1", "http://[fe80::1]:8080"]
)
def test_local_only_refuses_a_remote_endpoint_naming_the_key_and_host(
    tmp_path: Path, endpoint: str
) -> None:
    settings = _settings(tmp_path, provider="openai", model="m", endpoint=endpoint)
    with pytest.raises(InvalidInput) as caught:
        open_model(settings)
    message = str(caught.value)
    assert "llm.local_only" in message and "llm.endpoint" in message
    host = endpoint.split("//")[1].split("/")[0].rsplit(":", 1)[0].strip("[]")
    assert host in message


def test_anthropic_is_remote_so_needs_local_only_off(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="api.anthropic.com"):
        open_model(_settings(tmp_path, provider="anthropic", model="claude"))
    settings = _settings(tmp_path, provider="anthropic", model="claude", local_only=False)
    model = open_model(settings)
    assert model is not None and model.model_id == "anthropic:claude"
    model.close()


def test_a_model_name_is_required(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="llm.model is empty"):
        open_model(_settings(tmp_path, provider="ollama"))


def test_a_named_key_variable_that_is_unset_is_refused_by_name(tmp_path: Path) -> None:
    settings = _settings(tmp_path, provider="openai", model="m", api_key_env="MY_LLM_KEY")
    with pytest.raises(InvalidInput, match="MY_LLM_KEY, which is not set"):
        open_model(settings, env={})


def test_the_key_is_sent_as_a_bearer_token_and_never_shown(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    settings = _settings(
        tmp_path, provider="openai", model="m", endpoint=fake.url, api_key_env="MY_LLM_KEY"
    )
    records: list[RequestRecord] = []
    fake.script = [answer({"facts": []}), error(401, "nope")]
    model = open_model(settings, on_request=records.append, env={"MY_LLM_KEY": KEY})
    assert model is not None
    answered = model.ask(facts_ask())
    with pytest.raises(ModelUnavailable) as caught:
        model.ask(facts_ask())
    model.close()
    assert fake.log[0].headers["authorization"] == f"Bearer {KEY}"
    shown = [repr(settings), repr(answered), str(caught.value), *map(repr, records)]
    assert not [s for s in shown if KEY in s]


def test_every_key_is_overridable_from_the_environment(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    env = {
        "MEMORACLE_LLM_PROVIDER": "ollama",
        "MEMORACLE_LLM_ENDPOINT": fake.url,
        "MEMORACLE_LLM_MODEL": "qwen",
        "MEMORACLE_LLM_LOCAL_ONLY": "true",
        "MEMORACLE_LLM_API_KEY_ENV": "",
        "MEMORACLE_LLM_TIMEOUT": "7.5",
        "MEMORACLE_LLM_RETRIES": "0",
        "MEMORACLE_LLM_SCRUB": "email,name",
        "MEMORACLE_LLM_MAX_REPLY_BYTES": "5000",
    }
    settings = load(tmp_path / "home", env=env)
    assert {k for k, v in settings.sources.items() if v.startswith("env:")} == {
        "llm." + k.removeprefix("MEMORACLE_LLM_").lower() for k in env
    }
    fake.script = [error(503)]
    model = open_model(settings)
    assert model is not None and model.model_id == "openai:qwen"
    with pytest.raises(ModelUnavailable, match="after 1 try:"):  # retries = 0
        model.ask(facts_ask(user="Mail anna@example.org; my name is Anna Berg."))
    model.close()
    sent = fake.bodies()[0]
    assert "[EMAIL]" in sent and "[NAME]" in sent and "Anna" not in sent


@pytest.mark.parametrize("bad", [("scrub", "email,ssn"), ("api_key_env", "sk-abc def")])
def test_bad_values_are_refused_naming_the_key(tmp_path: Path, bad: tuple[str, str]) -> None:
    with pytest.raises(InvalidInput, match=f"llm.{bad[0]}"):
        load(tmp_path / "home", env={f"MEMORACLE_LLM_{bad[0].upper()}": bad[1]})


PLANTED = {
    "openai key": "sk-proj-" + "Ab3" * 15,
    "github token": "ghp_" + "a1B2c3D4e5" * 4,
    "password": "Xq!9vLm#2pRt",
    "email": "anna.berg@example.org",
    "phone": "+44 20 7946 0958",
    "card": "4111 1111 1111 1111",
    "iban": "DE89 3704 0044 0532 0130 00",
    "address": "221B Baker Street",
}
TEXT = (
    f"My key is {PLANTED['openai key']} and the token {PLANTED['github token']}; "
    f"password: {PLANTED['password']}. Write to {PLANTED['email']} or call "
    f"{PLANTED['phone']}. Card {PLANTED['card']}, IBAN {PLANTED['iban']}. "
    f"I live at {PLANTED['address']}, London."
)


def test_nothing_planted_leaves_the_process_through_any_provider(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    """Secrets and PII in both messages, over every mode the OpenAI provider steps through
    and over Anthropic's API: the fake's log of request bodies holds none of them."""
    fake.script = [error(500), error(500), answer({"facts": ["ok"]})]
    model = open_model(_settings(tmp_path, provider="openai", model="m", endpoint=fake.url))
    assert model is not None
    model.ask(facts_ask(user=TEXT, system="Context: " + TEXT))
    model.close()
    fake.script = [error(500), anthropic_tool({"facts": ["ok"]})]
    settings = _settings(
        tmp_path, provider="anthropic", model="c", endpoint=fake.url.removesuffix("/v1")
    )
    anthropic_model = open_model(settings)
    assert anthropic_model is not None
    assert anthropic_model.ask(facts_ask(user=TEXT, system=TEXT)).data == {"facts": ["ok"]}
    anthropic_model.close()
    assert [r.path for r in fake.log] == ["/v1/chat/completions"] * 3 + ["/v1/messages"] * 2
    leaked = [(kind, i) for i, body in enumerate(fake.bodies()) for kind, value in PLANTED.items()
              if value in body or value in json.loads(body).__repr__()]  # fmt: skip
    assert leaked == []
    for body in fake.bodies():
        for mark in ("[REDACTED:", "[EMAIL]", "[PHONE]", "[CARD]", "[IBAN]", "[ADDRESS]"):
            assert mark in body
        assert "Baker" not in body  # the address whole, not half of it


def test_anthropic_asks_for_its_json_schema_format_then_a_forced_tool(
    tmp_path: Path, fake: FakeModelServer
) -> None:
    fake.script = [
        anthropic_text('{"facts": ["x"]}'),
        error(400, "output_config: unknown"),
        anthropic_tool({"facts": ["y"]}),
    ]
    settings = _settings(tmp_path, provider="anthropic", model="c", endpoint=fake.url)
    with open_model(settings) as model:  # type: ignore[union-attr]
        got = model.ask(facts_ask())
    assert (got.data, got.tokens_in, got.tokens_out) == ({"facts": ["x"]}, 13, 5)
    assert (
        fake.log[0].json["output_config"]["format"]["schema"]["properties"]["facts"]["maxItems"]
        == 3
    )
    with open_model(settings) as model:  # type: ignore[union-attr]
        assert model.ask(facts_ask()).data == {"facts": ["y"]}
    body = fake.log[2].json
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert body["tools"][0]["input_schema"]["properties"]["facts"]["maxItems"] == 3


def test_a_unix_socket_endpoint_is_local(tmp_path: Path) -> None:
    socket = str(tmp_path / "model.sock")
    with fake_model_server(socket) as server:
        server.script = [answer({"facts": ["over the socket"]})]
        settings = _settings(tmp_path, provider="openai", model="m", endpoint=f"unix:{socket}")
        model = open_model(settings)
        assert model is not None
        assert model.ask(facts_ask()).data == {"facts": ["over the socket"]}
        model.close()
    assert server.log[0].path == "/v1/chat/completions"


def test_an_unreachable_server_is_unavailable_not_a_crash(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, provider="openai", model="m", endpoint="http://127.0.0.1:9", retries=1
    )
    records: list[RequestRecord] = []
    model = open_model(settings, on_request=records.append)
    assert model is not None
    with pytest.raises(EngineError) as caught:
        model.ask(facts_ask())
    model.close()
    assert isinstance(caught.value, ModelUnavailable)
    assert "cannot connect" in str(caught.value)
    assert [r.outcome for r in records] == ["retry", "unavailable"]
