"""The pages a person reads (GET): memories, one memory, recall, review, health, graph.
Each makes its engine calls in one `Ui.call` and renders one template."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memoracle.engine import Ambiguous, Engine, browse
from memoracle.engine.search import recall_budget
from memoracle.errors import InvalidInput, NotFound
from memoracle.jobs import canary, charts, health
from memoracle.types import KINDS, STATUSES, Entity, Relation
from memoracle.ui.app import Ui, redirect

PAGE_SIZE = 50
GRAPH_ENTITIES = 300  # entities listed on the graph page
GRAPH_RELATIONS = 300
PICTURE_NODES = 24  # the most named entities drawn in the picture
CHARTS = ("activation", "memories", "rates", "nightly")


def _ui(request: Request) -> Ui:
    ui = request.app.state.ui
    assert isinstance(ui, Ui)
    return ui


async def home(request: Request) -> Response:
    return redirect("/memories")


def _day(request: Request, name: str) -> date | None:
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise InvalidInput(f"{name}: not a date (YYYY-MM-DD): {raw!r}") from None


def _number(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name, "").strip()
    try:
        return max(1, int(raw)) if raw else default
    except ValueError:
        raise InvalidInput(f"{name}: not a number: {raw!r}") from None


def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    raw = request.query_params.get(name, "").strip()
    if raw and raw not in allowed:
        raise InvalidInput(f"{name}: {raw!r} is not one of {', '.join(allowed)}")
    return raw or None


async def memories(request: Request) -> Response:
    ui = _ui(request)
    q = request.query_params
    kind = _choice(request, "kind", KINDS)
    status = "active" if "status" not in q else _choice(request, "status", STATUSES)
    since, until = _day(request, "since"), _day(request, "until")
    page = _number(request, "page", 1)

    def read(engine: Engine) -> tuple[browse.Page, list[tuple[str, int]]]:
        zone = engine.zone
        wanted = browse.Filter(
            kind=kind,
            status=status,
            subject=q.get("subject", "").strip() or None,
            since=datetime.combine(since, time(), tzinfo=zone) if since else None,
            until=datetime.combine(until + timedelta(days=1), time(), tzinfo=zone)
            if until
            else None,
            text=q.get("q", "").strip() or None,
        )
        found = browse.memories_page(engine, wanted, page=page, size=PAGE_SIZE, scope=ui.scope)
        offered = ui.kept(
            engine, ("subjects", ui.scope), lambda e: browse.subjects(e, scope=ui.scope)
        )
        return found, offered

    found, subjects = await ui.call(read)
    args = {k: v for k, v in q.items() if k not in ("page", "note", "ref") and v}
    return ui.render(
        request,
        "memories.html",
        found=found,
        subjects=subjects,
        kinds=KINDS,
        statuses=STATUSES,
        args=args,
        state=status or "",
        number=page,
    )


async def memory(request: Request) -> Response:
    ui = _ui(request)
    ref = request.path_params["ref"]
    query = request.query_params.get("q", "")
    shown = await ui.call(lambda e: browse.detail(e, ref, query=query, scope=ui.scope))
    return ui.render(request, "memory.html", d=shown, m=shown.memory, q=query, kinds=KINDS)


async def recall(request: Request) -> Response:
    ui = _ui(request)
    message = request.query_params.get("q", "")
    budget = _number(request, "budget", recall_budget(ui.settings, None))
    block = None
    if message.strip():
        block = await ui.call(
            lambda e: browse.recall_preview(e, message, budget=budget, scope=ui.scope)
        )
    lines = [(line, browse.line_reasons(line)) for line in block.lines] if block else []
    return ui.render(request, "recall.html", q=message, budget=budget, block=block, lines=lines)


async def review(request: Request) -> Response:
    ui = _ui(request)
    described = request.query_params.get("describe", "").strip()
    duplicates = request.query_params.get("duplicates") == "1"

    def read(engine: Engine) -> tuple[browse.Review, list[object], str]:
        waiting = browse.review(engine, scope=ui.scope, duplicates=duplicates)
        if not described:
            return waiting, [], ""
        try:
            fits = engine.forget_matching(described, scope=ui.scope, dry_run=True, limit=50)
        except Ambiguous as exc:  # a dry run lists them; kept for safety
            fits = exc.candidates
        except InvalidInput as exc:
            return waiting, [], str(exc)
        return waiting, list(fits), ""

    waiting, fits, refusal = await ui.call(read)
    return ui.render(
        request,
        "review.html",
        r=waiting,
        describe=described,
        fits=fits,
        refusal=refusal,
    )


async def health_page(request: Request) -> Response:
    ui = _ui(request)
    home_dir = ui.settings.home
    last = health.last_report(home_dir / health.HISTORY_FILE)
    canaries = canary.load(home_dir / canary.CANARY_FILE) if ui.owner else []
    nightly = (last or {}).get("last_nightly")
    return ui.render(
        request,
        "health.html",
        report=last,
        warnings=(last or {}).get("warnings") or [],
        canaries=canaries,
        probe=(last or {}).get("canary") if ui.owner else None,
        nightly=nightly,
        charts=CHARTS,
    )


async def chart(request: Request) -> Response:
    ui = _ui(request)
    name = request.path_params["name"]
    if name not in CHARTS:
        raise NotFound(f"No chart {name!r}: one of {', '.join(CHARTS)}.")
    history = charts.read_history(ui.settings.home / health.HISTORY_FILE)
    svg = charts.draw(history, health=ui.settings.health)[name]
    return Response(svg, media_type="image/svg+xml")


@dataclass(frozen=True)
class Node:
    name: str
    key: str
    type: str
    x: float
    y: float


@dataclass(frozen=True)
class Edge:
    source: Node
    target: Node
    relation: str


def picture(entities: list[Entity], relations: list[Relation]) -> tuple[list[Node], list[Edge]]:
    """The most named entities on a circle, with the relations between them."""
    drawn = entities[:PICTURE_NODES]
    radius, middle = 230.0, 300.0
    nodes = {}
    for i, e in enumerate(drawn):
        angle = 2 * math.pi * i / max(1, len(drawn)) - math.pi / 2
        x, y = middle + radius * math.cos(angle), middle + radius * math.sin(angle)
        nodes[e.key] = Node(e.name, e.key, e.type, round(x, 1), round(y, 1))
    edges = [
        Edge(nodes[r.source], nodes[r.target], r.relation)
        for r in relations
        if r.source in nodes and r.target in nodes and r.source != r.target
    ]
    return list(nodes.values()), edges


async def graph(request: Request) -> Response:
    ui = _ui(request)
    wanted = request.query_params.get("type", "").strip() or None
    name = request.query_params.get("name", "").strip()

    def read(engine: Engine) -> tuple[list[Entity], list[Relation], object, str]:
        entities = ui.kept(
            engine,
            ("entities", ui.scope, wanted),
            lambda e: browse.entities(e, type_=wanted, limit=GRAPH_ENTITIES, scope=ui.scope),
        )
        relations = ui.kept(
            engine,
            ("relations", ui.scope),
            lambda e: browse.relations(e, limit=GRAPH_RELATIONS, scope=ui.scope),
        )
        try:
            return (
                entities,
                relations,
                engine.graph_show(name, scope=ui.scope) if name else None,
                "",
            )
        except NotFound as exc:
            return entities, relations, None, str(exc)

    entities, relations, shown, missing = await ui.call(read)
    by_type: dict[str, list[Entity]] = {}
    for e in entities:
        by_type.setdefault(e.type, []).append(e)
    nodes, edges = picture(entities, relations)
    return ui.render(
        request,
        "graph.html",
        by_type=sorted(by_type.items()),
        relations=relations,
        nodes=nodes,
        edges=edges,
        shown=shown,
        missing=missing,
        wanted=wanted or "",
        sample=browse.GRAPH_SAMPLE,
    )


ROUTES = [
    Route("/", home, methods=["GET"]),
    Route("/memories", memories, methods=["GET"]),
    Route("/memories/{ref}", memory, methods=["GET"]),
    Route("/recall", recall, methods=["GET"]),
    Route("/review", review, methods=["GET"]),
    Route("/health", health_page, methods=["GET"]),
    Route("/health/charts/{name}.svg", chart, methods=["GET"]),
    Route("/graph", graph, methods=["GET"]),
]
