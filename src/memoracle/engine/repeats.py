"""Is a text already stored? Answered by the comparison capture makes, so that
`dedup --query` says "duplicate" exactly when capturing the text as the user's turn now
would merge it into a memory ("I'm living in Paris." after "I live in Paris."), and
"new" when capture would store it ("I live in Paris now.": saying more is news).

The text is prepared and read as capture reads a user's turn (`capture.pipeline`, one
candidate per claim: `lifecycle.claims`); each claim is then looked for as `write`
looks for it: the same text (its hash), then in other words (`near.near_duplicate`),
then by meaning (`near.same_meaning`); the same text stored by hand (`remember`, with
no subject) is stored too. A text of several claims is stored when every claim is. A
text capture keeps nothing of (no rule reads it) is compared by the dedup score alone
(`upkeep.dedup_query`), as before. Reads only: nothing is stored or bumped.
"""

from __future__ import annotations

import functools

from memoracle.capture.pipeline import prepare, propose
from memoracle.engine import write
from memoracle.engine.near import near_duplicate, same_meaning
from memoracle.engine.scope import fill_scope
from memoracle.engine.state import EngineState
from memoracle.errors import InvalidInput
from memoracle.lifecycle import dedup
from memoracle.lifecycle.claims import split_claims
from memoracle.lifecycle.dedup import DedupScore
from memoracle.lifecycle.slots import slots_of
from memoracle.types import Memory, NewMemory, Scope

__all__ = ["Repeats", "captured_as"]


class Repeats(EngineState):
    """`Engine.repeat_of`, mixed into the engine (`core.Engine`'s bases)."""

    def repeat_of(
        self, text: str, *, scope: Scope | None = None
    ) -> list[tuple[Memory, DedupScore]] | None:
        """Whether capture would merge `text` into what `scope` (no scope: the workspace
        owner) has stored: the memories, one per claim (`captured_as`)."""
        return captured_as(self, text, scope=scope)


def captured_as(
    st: EngineState, text: str, *, scope: Scope | None = None
) -> list[tuple[Memory, DedupScore]] | None:
    """The memories capture would merge `text` into, one per claim it states, when it
    would merge every claim; [] when it would store one of them as new; None when
    capture keeps no memory of `text` (the caller compares it by the dedup score)."""
    prepared = prepare(text)
    if not prepared.text.strip():
        raise InvalidInput("Nothing to compare: the text is empty.")
    now = st.clock.now()
    found = propose(
        prepared.text,
        role="user",
        speaker=None,
        at=st.anchor_time(now),
        day_first=st.settings.workspace.day_first,
        languages=tuple(st.settings.capture.languages),
        classifier=st.classifier,
        split=functools.partial(split_claims, speaker=None),
    )
    kept = [p for p in found.proposals if p.candidate.action == "store"]
    if not kept:
        return None
    owner = fill_scope(st.settings, scope)
    matches = []
    for proposal in kept:
        new = write.new_memory(st, proposal, observed_at=now, scope=owner, source="capture")
        match = _stored(st, new)
        if match is None:
            return []
        matches.append(match)
    return matches


def _stored(st: EngineState, new: NewMemory) -> tuple[Memory, DedupScore] | None:
    """The live memory `write.store_memory` would merge `new` into, with its score; or
    the same text stored by hand (`remember`: no subject, perhaps another kind), which
    capture would store again but nobody would call new."""
    now = st.clock.now()
    same = st._store.memories.find_duplicate(
        new.content_hash, new.subject, new.scope, now=now
    ) or st._store.memories.find_duplicate(new.content_hash, None, new.scope, now=now)
    if same is not None:
        memory = st.memory(same)
        return memory, dedup.query(new.text, [(memory.id, memory.text)], limit=1)[0][1]
    slots = slots_of(new.text, lang=new.lang)
    near = near_duplicate(st, new, slots) or same_meaning(st, new, slots)
    return (st.memory(near[0]), near[1]) if near is not None else None
