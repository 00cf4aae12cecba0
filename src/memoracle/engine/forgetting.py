"""Forgetting: what a "forget …" said in a turn forgets (the speaker's own memory with
that text, the one holding its words, or the one it describes; several are left waiting
for a person), and a memory forgotten with the turns that would keep it alive. Every
door that forgets (capture, `forget ID`, `forget --query`, `resolve`) ends in
`set_forgotten`. docs/lifecycle.md, "Forget means forget".
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from memoracle.capture.dates import find_dates
from memoracle.engine import settle
from memoracle.engine.state import EngineState
from memoracle.text import content_hash
from memoracle.types import Candidate, Memory, Scope

__all__ = ["forget_said", "set_forgotten"]

# Where the description in a "forget …" ends: a clause or a sentence.
_CLAUSE = re.compile(r"\s*(?:[,;:(]|\s[-–—]\s|[.!?…](?:\s|$))")


def forget_said(
    st: EngineState,
    candidate: Candidate,
    scope: Scope,
    *,
    now: datetime,
    episode_id: int,
    asked: bool = True,
) -> list[int] | None:
    """A "forget …" said in a turn: the speaker's own memory in this scope with exactly
    that text, else the single one containing all its words, else (said to the
    assistant, `asked`) those it describes (`settle.described_memories`). Several
    candidates — or one holding its words while it describes others too — are
    ambiguous (None): nothing is forgotten, they wait for a person (`_ask`)."""
    memories = st._store.memories
    exact = memories.find_duplicate(content_hash(candidate.text), candidate.subject, scope)
    ids = (
        [exact]
        if exact is not None
        else memories.match(candidate.text, scope=scope, subject=candidate.subject, limit=_ASKED)
    )
    if len(ids) == 1 and exact is None and asked:  # "my dog": Toby's, and Rex's too?
        ids += settle.also_described(st, candidate.text, ids, scope, lang=candidate.lang)
    if len(ids) > 1:
        fits = memories.get_many(ids)
        if asked:
            _ask(st, candidate, fits, now=now, episode_id=episode_id)
        return None
    if not ids and asked:  # not people talking to each other ("let's forget about work")
        lang = candidate.lang
        meant, unclear = settle.described_memories(st, candidate.text, scope, lang=lang)
        if not meant:
            # Said with its time and its why ("my ex last night, I don't want that
            # stored"): the first clause without the time, when it names exactly one.
            short = _description(candidate.text, candidate.lang, now)
            shortly, _ = settle.described_memories(st, short, scope, lang=lang)
            if len(shortly) == 1:
                meant, unclear = shortly, []
        if unclear or len(meant) > 1:
            _ask(st, candidate, meant or unclear, now=now, episode_id=episode_id)
            return None
        ids = [m.id for m in meant]
    detail = {"said": candidate.text, "episode": episode_id}
    for memory in memories.get_many(ids):
        set_forgotten(st, memory, now=now, actor="capture", detail=detail, said_in=episode_id)
    if ids:
        settle.write_forgotten_marks(st)
    return ids


def _ask(
    st: EngineState, candidate: Candidate, fits: list[Memory], *, now: datetime, episode_id: int
) -> None:
    """A "forget …" that fits several memories forgets none: each is left waiting for a
    person (an audit `forget-asked`, listed by `memoracle pending`: `resolve --reject`
    forgets it, `--confirm` keeps it)."""
    for memory in fits[:_ASKED]:
        st._store.audit.append(
            at=now,
            actor="capture",
            action="forget-asked",
            memory_id=memory.id,
            detail={"said": candidate.text, "episode": episode_id, "fits": len(fits)},
        )


_ASKED = 20  # memories an unclear "forget …" leaves waiting for a person, at most


def _description(text: str, lang: str | None, at: datetime) -> str:
    """What a "forget …" describes, shortly: its first clause, without a time ("my ex
    last night, I don't want that stored anywhere" -> "my ex"; "mon frère, c'est pas à
    moi de le partager" -> "mon frère"). Used only when the whole description fits no
    memory wholly, and only when the short one fits exactly one ("the meeting on
    Friday, it got cancelled" must not forget every meeting)."""
    head = _CLAUSE.split(text, maxsplit=1)[0]
    mentions = find_dates(head, at, lang) if lang else []
    for mention in sorted(mentions, key=lambda m: m.span[0], reverse=True):
        head = head[: mention.span[0]] + head[mention.span[1] :]
    return " ".join(head.split()) or text


def set_forgotten(
    st: EngineState,
    memory: Memory,
    *,
    now: datetime,
    actor: str,
    detail: dict[str, Any],
    said_in: int | None = None,
) -> None:
    """Forget `memory` and the turns that would keep it alive (`settle.turns_to_hide`,
    `said_in` the turn that asked): they are linked to it, so they leave search and
    recall with it; the audit entry names them (`turns`). The caller rewrites the
    fallback's marks once it is done (`settle.write_forgotten_marks`)."""
    hidden = settle.turns_to_hide(st, memory, said_in=said_in)
    for episode_id in hidden:
        st._store.memories.add_provenance(memory.id, now=now, episode_id=episode_id)
    st._store.memories.set_status(memory.id, "forgotten", now=now)
    more = {"turns": [f"e_{e}" for e in hidden]} if hidden else {}
    st._store.audit.append(
        at=now,
        actor=actor,
        action="forget",
        memory_id=memory.id,
        detail={"from": memory.status, **detail, **more},
    )
