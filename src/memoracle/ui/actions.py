"""The changes a person makes (POST, each checked by the guard for its token, CSRF field
and origin first): edit, pin, forget, restore, time to live, approve or reject a held
write, resolve a dispute, check health. Each goes through the engine method the CLI
uses, with the actor "ui", on an item the page's view may see (another is "No memory",
as for an id that does not exist), then leads back to a page with a fixed note."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memoracle.clock import parse_duration, parse_until
from memoracle.engine import Engine, amend
from memoracle.engine.scope import can_see
from memoracle.errors import InvalidInput, NotFound
from memoracle.jobs import health
from memoracle.types import KINDS
from memoracle.ui.app import ACTOR, Ui, redirect


def _ui(request: Request) -> Ui:
    ui = request.app.state.ui
    assert isinstance(ui, Ui)
    return ui


async def _form(request: Request) -> FormData:
    return await request.form()


def _text(form: FormData, name: str) -> str:
    value = form.get(name, "")
    if not isinstance(value, str):
        raise InvalidInput(f"{name}: expected text")
    return value


def _back(ref: str, note: str) -> Response:
    return redirect(f"/memories/{ref}", note)


async def edit(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    form = await _form(request)
    text, kind = _text(form, "text"), _text(form, "kind").strip() or None
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind: {kind!r} is not one of {', '.join(KINDS)}")
    new = await ui.call(
        lambda e: amend.edit(e, ref, text=text, kind=kind, scope=ui.scope, actor=ACTOR)
    )
    return _back(new.ref, "edited")


async def pin(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    on = _text(await _form(request), "pinned") == "1"
    memory = await ui.call(lambda e: amend.pin(e, ref, on, scope=ui.scope, actor=ACTOR))
    return _back(memory.ref, "pinned" if on else "unpinned")


async def forget(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    reason = _text(await _form(request), "reason").strip()

    def work(engine: Engine) -> str:
        engine.get(ref, scope=ui.scope)  # "No memory" for one the view does not hold
        return engine.forget(ref, actor=ACTOR, reason=reason).ref

    return _back(await ui.call(work), "forgotten")


async def restore(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    await _form(request)

    def work(engine: Engine) -> str:
        engine.get(ref, scope=ui.scope)
        return engine.restore(ref, actor=ACTOR).ref

    return _back(await ui.call(work), "restored")


def _expiry(form: FormData) -> tuple[timedelta | None, date | datetime | None]:
    if _text(form, "clear"):
        return None, None
    ttl, until = _text(form, "ttl").strip(), _text(form, "until").strip()
    if not ttl and not until:
        raise InvalidInput("ttl: give a time to live (7d, 12h) or an end date, or clear it.")
    try:
        return (parse_duration(ttl) if ttl else None), (parse_until(until) if until else None)
    except ValueError as exc:
        raise InvalidInput(f"{'ttl' if ttl else 'until'}: {exc}") from None


async def expiry(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    ttl, until = _expiry(await _form(request))
    memory = await ui.call(
        lambda e: amend.set_expiry(e, ref, ttl=ttl, expires_at=until, scope=ui.scope, actor=ACTOR)
    )
    return _back(memory.ref, "expiry" if memory.expires_at else "no-expiry")


def _held_visible(ui: Ui, engine: Engine, ref: str) -> None:
    """`NotFound` for a held write the view may not see, as for one that does not exist."""
    for held in engine.held_writes():
        if held.ref == ref or str(held.id) == ref:
            if can_see(ui.settings, ui.scope, held.scope):
                return
            break
    raise NotFound(f"No held write {ref!r}.")


async def approve(request: Request) -> Response:
    return await _decide_held(request, "approved")


async def reject(request: Request) -> Response:
    return await _decide_held(request, "rejected")


async def _decide_held(request: Request, decision: str) -> Response:
    """A held write the page's scope may see, approved (stored) or rejected."""
    ui, ref = _ui(request), request.path_params["ref"]
    await _form(request)

    def work(engine: Engine) -> None:
        _held_visible(ui, engine, ref)
        if decision == "approved":
            engine.confirm_held(ref, actor=ACTOR)
        else:
            engine.reject_held(ref, actor=ACTOR)

    await ui.call(work)
    return redirect("/review", decision, ref)


async def resolve(request: Request) -> Response:
    ui, ref = _ui(request), request.path_params["ref"]
    form = await _form(request)
    decision = _text(form, "decision")
    if decision not in ("confirm", "reject"):
        raise InvalidInput("decision: confirm or reject")
    replacement = _text(form, "replacement").strip() or None

    def work(engine: Engine) -> str:
        engine.get(ref, scope=ui.scope)
        return engine.resolve(
            ref, confirm=decision == "confirm", replacement=replacement, actor=ACTOR
        ).ref

    return redirect("/review", "resolved", await ui.call(work))


async def check_health(request: Request) -> Response:
    ui = _ui(request)
    await _form(request)

    def work(engine: Engine) -> None:
        report = health.check(engine, probe=True)
        if not engine.readonly:
            health.write(engine, report)

    await ui.call(work)
    return redirect("/health", "checked")


ROUTES = [
    Route("/memories/{ref}/edit", edit, methods=["POST"]),
    Route("/memories/{ref}/pin", pin, methods=["POST"]),
    Route("/memories/{ref}/forget", forget, methods=["POST"]),
    Route("/memories/{ref}/restore", restore, methods=["POST"]),
    Route("/memories/{ref}/expiry", expiry, methods=["POST"]),
    Route("/held/{ref}/approve", approve, methods=["POST"]),
    Route("/held/{ref}/reject", reject, methods=["POST"]),
    Route("/disputes/{ref}/resolve", resolve, methods=["POST"]),
    Route("/health/check", check_health, methods=["POST"]),
]
