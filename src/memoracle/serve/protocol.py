"""What a client may send, checked: turns to capture and the scope they belong to.

The warm server and `memoracle capture` (JSON on stdin) read the same objects, so a turn
refused by one is refused by the other with the same words: each error names where it
is (``stdin item 1``, ``request field 'turns' item 0``) and the field at fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoracle.clock import parse_instant
from memoracle.errors import InvalidInput
from memoracle.types import Scope, Turn

__all__ = ["SCOPE_FIELDS", "TURN_FIELDS", "scope_of", "turn_pair", "turns_of"]

SCOPE_FIELDS = ("agent", "user_id", "chat", "visibility")
TURN_FIELDS = frozenset({"user", "assistant", "at", "session", "turn", "speaker", *SCOPE_FIELDS})


def scope_of(item: dict[str, Any], default: Scope, where: str) -> Scope:
    """The scope an object names (agent, user_id, chat, visibility), each field missing
    taken from `default`; a field that is not a string, an empty one, or a visibility
    other than private or shared, is an InvalidInput naming it."""
    for name in SCOPE_FIELDS:
        if item.get(name) is not None and not isinstance(item[name], str):
            raise InvalidInput(f"{where}: field '{name}' must be a string")
        if isinstance(item.get(name), str) and not item[name].strip():
            # An empty id would silently mean the owner's: say so instead.
            raise InvalidInput(f"{where}: field '{name}' is empty; leave it out for the default")
    visibility = item.get("visibility") or default.visibility
    if visibility not in ("private", "shared"):
        raise InvalidInput(f"{where}: field 'visibility' must be private or shared")
    return Scope(
        agent=item.get("agent") or default.agent,
        user=item.get("user_id") or default.user,
        chat=item.get("chat") or default.chat,
        visibility=visibility,
    )


def turn_pair(
    user_text: str | None,
    assistant_text: str | None,
    at: Any,
    session: str | None,
    turn: str | None,
    speaker: str | None,
) -> list[Turn]:
    """A user turn and/or the assistant's answer, as `capture` stores them."""
    turns = []
    if user_text is not None:
        turns.append(Turn("user", user_text, at, session, turn, speaker, origin="capture"))
    if assistant_text is not None:
        turns.append(Turn("assistant", assistant_text, at, session, turn, None, origin="capture"))
    return turns


def turns_of(data: Any, default: Scope, where: str) -> list[tuple[Sequence[Turn], Scope | None]]:
    """The turns in `data` (one object or a list of them), each batch with its scope.

    Raises InvalidInput naming the item and the field: an unknown field, a value that is
    not a string, no text, a bad visibility or a time that is not ISO-8601."""
    many = isinstance(data, list)
    items = data if many else [data]
    if not items:
        raise InvalidInput(f"{where}: an empty list; nothing to capture.")
    out: list[tuple[Sequence[Turn], Scope | None]] = []
    for i, item in enumerate(items):
        here = f"{where} item {i}" if many else where
        if not isinstance(item, dict):
            raise InvalidInput(
                f"{here}: expected an object with 'user' and/or 'assistant', "
                f"got {type(item).__name__}"
            )
        unknown = set(item) - TURN_FIELDS
        if unknown:
            raise InvalidInput(
                f"{here}: unknown field(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(TURN_FIELDS))}"
            )
        for name in TURN_FIELDS:
            if item.get(name) is not None and not isinstance(item[name], str):
                raise InvalidInput(f"{here}: field '{name}' must be a string")
        if item.get("user") is None and item.get("assistant") is None:
            raise InvalidInput(f"{here}: needs 'user' and/or 'assistant' text")
        scope = scope_of(item, default, here)
        at = None
        if item.get("at") is not None:
            try:
                at = parse_instant(item["at"])
            except ValueError as exc:
                raise InvalidInput(f"{here}: field 'at': {exc}") from None
        pair = turn_pair(
            item.get("user"),
            item.get("assistant"),
            at,
            item.get("session"),
            item.get("turn"),
            item.get("speaker"),
        )
        out.append((pair, scope))
    return out
