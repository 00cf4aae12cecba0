"""`open_model`: the model the `[llm]` settings name, or None when the path is off."""

from __future__ import annotations

import os
from collections.abc import Mapping

from memoracle.config import Settings
from memoracle.errors import InvalidInput
from memoracle.llm.anthropic_chat import AnthropicChat
from memoracle.llm.chat import OnRequest, Options
from memoracle.llm.endpoint import parse_endpoint
from memoracle.llm.openai_chat import OpenAIChat
from memoracle.llm.types import Model

# provider -> (default endpoint, the API path its URL ends in)
ENDPOINTS = {
    "openai": ("http://127.0.0.1:8080/v1", "/v1"),  # llama.cpp's server
    "ollama": ("http://127.0.0.1:11434/v1", "/v1"),
    "anthropic": ("https://api.anthropic.com", ""),
}


def open_model(
    settings: Settings,
    *,
    on_request: OnRequest | None = None,
    env: Mapping[str, str] | None = None,
) -> Model | None:
    """The configured model, or None when `llm.provider` is empty (the default: off).

    Checks the settings first (a model name, the endpoint against `llm.local_only`, the
    key's variable set when one is named) and raises InvalidInput naming the key; only
    then imports the provider's client (the llm extra; InvalidInput saying how to install
    it when missing). Nothing is sent until the first `ask`. `on_request` receives one
    RequestRecord per request."""
    llm = settings.llm
    if not llm.provider:
        return None
    if not llm.model.strip():
        raise InvalidInput(
            f"llm.model is empty: name the model {llm.provider} should use (the name your "
            "server gives it, e.g. 'qwen2.5:7b' in Ollama). Or set llm.provider = '' to "
            "turn the model path off."
        )
    api_key = _api_key(llm.api_key_env, os.environ if env is None else env)
    options = Options(
        timeout=llm.timeout,
        retries=llm.retries,
        scrub=tuple(llm.scrub),
        max_reply_bytes=llm.max_reply_bytes,
    )
    default, api_path = ENDPOINTS[llm.provider]
    endpoint = parse_endpoint(llm.endpoint, default, api_path=api_path, local_only=llm.local_only)
    kind = AnthropicChat if llm.provider == "anthropic" else OpenAIChat
    try:
        return kind(
            llm.model.strip(), endpoint, api_key=api_key, options=options, on_request=on_request
        )
    except ImportError as err:
        raise InvalidInput(
            f"llm.provider = {llm.provider!r} needs the optional model clients, which are not "
            f"installed (no module {err.name or err}). Install them: pip install 'memoracle[llm]'"
        ) from None


def _api_key(name: str, env: Mapping[str, str]) -> str:
    """The key in the variable `llm.api_key_env` names; never logged, stored or shown."""
    if not name:
        return ""
    value = env.get(name, "")
    if not value:
        raise InvalidInput(
            f"llm.api_key_env names the environment variable {name}, which is not set or "
            "empty. Set it to the API key before running, or clear llm.api_key_env."
        )
    return value
