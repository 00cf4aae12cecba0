"""What every page shares: one engine kept open for one owner's view (one call at a
time), the templates (Jinja2, autoescaped: a memory's text is always shown as text), the
fixed notes a change leads back with, and errors as pages."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings
from memoracle.engine import Engine, browse
from memoracle.engine.scope import is_owner
from memoracle.errors import EngineError, NotFound, StoreError, WriteHeld
from memoracle.types import Scope
from memoracle.ui.guard import CSRF_FIELD, Access

ACTOR = "ui"  # who the audit log says made a change through the page
KEPT = 64  # answers kept for the store's generation (`Ui.kept`), at most

T = TypeVar("T")


@dataclass
class Ui:
    """What every page shares: the settings, the one scope it shows, the engine (opened
    on first use, one call at a time), the access token and the templates."""

    settings: Settings
    scope: Scope
    access: Access
    clock: Clock = field(default_factory=SystemClock)
    _engine: Engine | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _kept: dict[Hashable, tuple[tuple[int, int], Any]] = field(default_factory=dict)
    templates: Environment = field(
        default_factory=lambda: Environment(
            loader=PackageLoader("memoracle.ui", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
    )

    @property
    def owner(self) -> bool:
        return is_owner(self.settings, self.scope)

    def kept(self, engine: Engine, key: Hashable, compute: Callable[[Engine], T]) -> T:
        """`compute(engine)` once per store generation (`browse.generation`): while
        nothing is written, the page's own changes included, the answer is the same.
        Only this page's one scope is ever asked; call it inside `call`."""
        now = browse.generation(engine)
        found = self._kept.get(key)
        if found is not None and found[0] == now:
            return found[1]  # type: ignore[no-any-return]
        value = compute(engine)
        if len(self._kept) >= KEPT:
            self._kept.clear()
        self._kept[key] = (now, value)
        return value

    def engine(self) -> Engine:
        if self._engine is None:
            # A generation is one connection's count: a new connection starts them
            # again, so nothing kept under the old one may answer for it.
            self._kept.clear()
            self._engine = Engine.open(self.settings, clock=self.clock, land_vectors=True)
        return self._engine

    async def call(self, work: Callable[[Engine], T]) -> T:
        """Run `work` on the engine in a worker thread, one call at a time; a store
        error drops the engine so the next call opens the database again."""

        def run() -> T:
            with self._lock:
                try:
                    return work(self.engine())
                except StoreError:
                    self.close_engine()
                    raise

        return await anyio.to_thread.run_sync(run)

    def close_engine(self) -> None:
        self._kept.clear()
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def render(self, request: Request, name: str, status: int = 200, **values: Any) -> Response:
        template = self.templates.get_template(name)
        body = template.render(
            csrf=self.access.csrf,
            csrf_field=CSRF_FIELD,
            who=self.scope,
            owner=self.owner,
            page=name.removesuffix(".html"),
            note=NOTES.get(request.query_params.get("note", "")),
            noted=request.query_params.get("ref", ""),
            **values,
        )
        return HTMLResponse(body, status_code=status)


#: What a change says on the page it leads back to (`?note=`): fixed texts, never echoed.
NOTES: Mapping[str, str] = {
    "edited": "Saved as a new memory; the old one is superseded by it.",
    "pinned": "Pinned.",
    "unpinned": "Unpinned.",
    "forgotten": "Forgotten. Restore brings it back.",
    "restored": "Restored.",
    "expiry": "Time to live saved.",
    "no-expiry": "Kept for good: no time to live.",
    "approved": "Approved: the held write was stored.",
    "rejected": "Rejected: the held write stays held, for the record.",
    "resolved": "Resolved.",
    "checked": "Health checked.",
    "held": "The write audit held this text back: approve it under Held writes.",
}


def redirect(path: str, note: str = "", ref: str = "") -> Response:
    query = f"?note={note}" + (f"&ref={ref}" if ref else "") if note else ""
    return RedirectResponse(path + query, status_code=303)


def error_page(ui: Ui, request: Request, error: EngineError) -> Response:
    """An engine error as a page: 404 for what the view does not hold, 400 otherwise."""
    status = 404 if isinstance(error, NotFound) else 400
    return ui.render(request, "error.html", status=status, message=str(error))


def held_redirect(error: WriteHeld) -> Response:
    return redirect("/review", "held", error.ref)


__all__ = ["ACTOR", "NOTES", "Ui", "error_page", "held_redirect", "redirect"]
