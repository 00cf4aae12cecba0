"""Any OpenAI-compatible chat endpoint (llama.cpp's server, vLLM, LM Studio, Ollama's
/v1, OpenAI itself), through the official `openai` client (the llm extra), imported
only when such a model is opened. Structured output: `response_format` json_schema,
then json_object when the server refuses that, then plain text with the schema in the
system message (llama-cpp-python's server answers HTTP 500 to json_schema)."""

from __future__ import annotations

import time
from typing import Any

from memoracle.llm.chat import ChatModel, Exchange, error_message, schema_instruction
from memoracle.llm.types import Ask


class OpenAIChat(ChatModel):
    provider = "openai"
    modes = ("json_schema", "json_object", "text")

    def _client(self, url: str, api_key: str, http: Any) -> Any:
        import openai

        # A local server needs no key, but the client insists on one.
        return openai.OpenAI(
            base_url=url, api_key=api_key or "none", max_retries=0, http_client=http
        )

    def _kwargs(self, ask: Ask, system: str, user: str, mode: str) -> dict[str, Any]:
        if mode != "json_schema":
            system = f"{system}\n\n{schema_instruction(ask.schema)}".strip()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": ask.max_tokens,
            "temperature": 0,
        }
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _name(ask.purpose), "schema": ask.schema, "strict": True},
            }
        elif mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _send(self, kwargs: dict[str, Any]) -> Exchange:
        import openai

        started = time.perf_counter()
        try:
            with self._api.chat.completions.with_streaming_response.create(**kwargs) as reply:
                if reply.status_code != 200:  # a 2xx or 3xx other than 200: not an answer
                    return Exchange(reply.status_code, detail=f"HTTP {reply.status_code}")
                return self._read(reply.headers, reply.iter_bytes(), started)
        except openai.APITimeoutError:
            return Exchange(0, detail=f"timed out after {self.options.timeout:g} s")
        except openai.APIConnectionError as err:
            return Exchange(0, detail=f"cannot connect ({err.__cause__ or err})")
        except openai.APIStatusError as err:
            return self._status(err.status_code, err.response.headers, error_message(err))

    def _content(self, envelope: Any) -> tuple[str, int, int]:
        message = envelope["choices"][0]["message"]
        text = message.get("content")
        if not isinstance(text, str):
            raise TypeError(f"message content is {type(text).__name__}, not text")
        usage = envelope.get("usage") or {}
        return text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _name(purpose: str) -> str:
    """A schema name the API accepts: letters, digits, _ and -, at most 64."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in purpose)[:64] or "answer"
