"""Anthropic's Messages API, through the official `anthropic` client (the llm extra),
imported only when such a model is opened. Structured output: the API's JSON schema
output format; when the endpoint refuses it, one tool whose input schema is the ask's
schema, the model made to call it; then plain text with the schema in the system
message. It is not on this machine, so
`llm.local_only` must be false to use it (docs/llm.md#anthropic)."""

from __future__ import annotations

import json
import time
from typing import Any

from memoracle.llm.chat import ChatModel, Exchange, error_message, schema_instruction
from memoracle.llm.types import Ask

TOOL = "answer"


class AnthropicChat(ChatModel):
    provider = "anthropic"
    modes = ("json_schema", "tool", "text")

    def _client(self, url: str, api_key: str, http: Any) -> Any:
        import anthropic

        return anthropic.Anthropic(
            base_url=url, api_key=api_key or "none", max_retries=0, http_client=http
        )

    def _kwargs(self, ask: Ask, system: str, user: str, mode: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": ask.max_tokens,
            "messages": [{"role": "user", "content": user}],
        }
        if mode == "json_schema":
            kwargs["output_config"] = {"format": {"type": "json_schema", "schema": ask.schema}}
        elif mode == "tool":
            kwargs["tools"] = [
                {
                    "name": TOOL,
                    "description": f"Give the answer ({ask.purpose}).",
                    "input_schema": ask.schema,
                }
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": TOOL}
        else:
            system = f"{system}\n\n{schema_instruction(ask.schema)}".strip()
        if system:
            kwargs["system"] = system
        return kwargs

    def _send(self, kwargs: dict[str, Any]) -> Exchange:
        import anthropic

        started = time.perf_counter()
        try:
            with self._api.messages.with_streaming_response.create(**kwargs) as reply:
                if reply.status_code != 200:
                    return Exchange(reply.status_code, detail=f"HTTP {reply.status_code}")
                return self._read(reply.headers, reply.iter_bytes(), started)
        except anthropic.APITimeoutError:
            return Exchange(0, detail=f"timed out after {self.options.timeout:g} s")
        except anthropic.APIConnectionError as err:
            return Exchange(0, detail=f"cannot connect ({err.__cause__ or err})")
        except anthropic.APIStatusError as err:
            return self._status(err.status_code, err.response.headers, error_message(err))

    def _content(self, envelope: Any) -> tuple[str, int, int]:
        usage = envelope.get("usage") or {}
        tokens = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
        blocks = envelope["content"]
        for block in blocks:
            if block.get("type") == "tool_use" and block.get("name") == TOOL:
                return json.dumps(block["input"]), *tokens
        text = "".join(b["text"] for b in blocks if b.get("type") == "text")
        return text, *tokens
