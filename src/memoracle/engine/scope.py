"""Whose memory a request is about: a caller's scope filled in from the workspace's
defaults (`fill_scope`). Every door and job that acts for someone goes through it, so an
empty agent or user means the workspace's own, never "anyone"."""

from __future__ import annotations

from memoracle.config import Settings
from memoracle.errors import InvalidInput
from memoracle.types import Scope

__all__ = ["fill_scope"]


def fill_scope(settings: Settings, scope: Scope | None) -> Scope:
    """`scope` with its agent and user defaulted to `workspace.agent` / `workspace.user`;
    `InvalidInput` for a visibility other than private or shared."""
    scope = scope or Scope()
    if scope.visibility not in ("private", "shared"):
        raise InvalidInput(f"visibility must be private or shared, not {scope.visibility!r}")
    return Scope(
        agent=scope.agent or settings.workspace.agent or None,
        user=scope.user or settings.workspace.user or None,
        chat=scope.chat,
        visibility=scope.visibility,
    )
