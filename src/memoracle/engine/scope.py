"""Whose memory a request is about, and what it may see.

`fill_scope` fills a caller's scope from the workspace's defaults, so an empty agent or
user means the workspace's own, never "anyone". `view_for` and `can_see` apply the one
visibility rule (`types.visible_to`, docs/scopes.md) with the workspace's own agent and
user: every read path goes through one of them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memoracle.config import Settings
from memoracle.errors import InvalidInput
from memoracle.storage_types import View
from memoracle.types import Scope, sees

__all__ = ["can_see", "fill_scope", "is_owner", "own_scope", "view_for"]


def own_scope(settings: Settings) -> Scope:
    """The workspace's own agent and user: what an unset one means. As a request, the
    owner's private context, whose views MEMORY.md, SESSION-START.md, the daily notes
    and the other rendered files are."""
    return Scope(agent=settings.workspace.agent or None, user=settings.workspace.user or None)


def fill_scope(settings: Settings, scope: Scope | None) -> Scope:
    """`scope` with its agent and user defaulted to `workspace.agent` / `workspace.user`;
    `InvalidInput` for a visibility other than private or shared."""
    scope = scope or Scope()
    if scope.visibility not in ("private", "shared"):
        raise InvalidInput(f"visibility must be private or shared, not {scope.visibility!r}")
    return Scope(
        agent=scope.agent or settings.workspace.agent or None,
        user=scope.user or settings.workspace.user or None,
        chat=scope.chat or None,
        visibility=scope.visibility,
    )


def is_owner(settings: Settings, scope: Scope | None) -> bool:
    """Whether `scope` (filled) is the workspace owner's private context, the one whose
    views the rendered files are (any chat: a person sees their own items from every
    chat)."""
    filled = fill_scope(settings, scope)
    own = own_scope(settings)
    return filled.visibility == "private" and (filled.agent, filled.user) == (own.agent, own.user)


def view_for(
    settings: Settings,
    scope: Scope | None,
    kinds: Sequence[str] = (),
    as_of: datetime | None = None,
    now: datetime | None = None,
) -> View:
    """What `scope` (filled) may see, as a `View` for the store (at `now`, when given: what
    expired by then is left out)."""
    return View(fill_scope(settings, scope), tuple(kinds), as_of, now, own_scope(settings))


def can_see(settings: Settings, scope: Scope | None, item: Scope) -> bool:
    """Whether `scope` (filled) may see an item of scope `item`."""
    return sees(fill_scope(settings, scope), item, own_scope(settings))
