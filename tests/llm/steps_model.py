"""A scripted in-process model for the nightly model steps' tests: it satisfies the
`Model` protocol and answers from a script (a reply per ask: data, a callable of the
ask, or an exception to raise), recording every ask it got."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from memoracle.llm import Answer, Ask

Reply = dict[str, Any] | Callable[[Ask], Any] | Exception


class Scripted:
    model_id = "scripted-1"

    def __init__(self, *replies: Reply, tokens: tuple[int, int] = (100, 50)) -> None:
        self.replies = list(replies)
        self.asked: list[Ask] = []
        self.tokens = tokens
        self.closed = False

    def ask(self, ask: Ask) -> Answer:
        self.asked.append(ask)
        reply = self.replies.pop(0) if self.replies else {}
        if isinstance(reply, Exception):
            raise reply
        data = reply(ask) if callable(reply) else reply
        sent = (ask.system + ask.user).encode()
        return Answer(data, self.model_id, ask.prompt_version, *self.tokens,
                      hashlib.sha256(sent).hexdigest(), len(sent))  # fmt: skip

    def close(self) -> None:
        self.closed = True
