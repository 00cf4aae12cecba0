"""The web page (`memoracle ui`): see and correct what the agent remembers, one owner's
view at a time, on loopback, behind a token. docs/ui.md."""

from memoracle.ui.app import ACTOR, Ui
from memoracle.ui.guard import Access, new_token
from memoracle.ui.server import DEFAULT_PORT, build_app, is_loopback, routes, run, ui_of

__all__ = [
    "ACTOR",
    "Access",
    "DEFAULT_PORT",
    "Ui",
    "build_app",
    "is_loopback",
    "new_token",
    "routes",
    "run",
    "ui_of",
]
