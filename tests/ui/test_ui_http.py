"""The web page over HTTP (no browser): no token no data on every route, changes only
with the CSRF token from the page's own origin, HTML in a memory shown as text, another
person's memory never shown nor changed, and every correction audited as "ui"."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Mount, Route
from starlette.testclient import TestClient
from ui_world import (
    GROUP,
    HTML,
    ORIGIN,
    SCRIPT,
    SECRET,
    TOKEN,
    World,
    build_world,
    client,
    post,
)

from memoracle.engine import browse
from memoracle.types import Turn
from memoracle.ui import routes, ui_of
from memoracle.ui.guard import COOKIE, CSP


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def _paths(c: TestClient, world: World) -> list[tuple[str, str]]:
    """Every route of the app (method, a concrete path): a route added later is in it."""
    app = c.app
    found = []
    for route in routes(app):  # type: ignore[arg-type]
        if isinstance(route, Mount):
            found.append(("GET", "/static/style.css"))
            continue
        assert isinstance(route, Route)
        path = route.path.replace("{ref}", world.refs["dark"]).replace("{name}", "activation")
        for method in sorted(route.methods or {"GET"}):
            if method != "HEAD":
                found.append((method, path))
    return found


def test_every_route_needs_the_token(world: World) -> None:
    c, access = client(world, logged_in=False)
    paths = _paths(c, world)
    assert len(paths) >= 17, paths  # 8 pages, 9 changes, the static files
    for method, path in paths:
        if path.startswith("/static/"):
            assert c.get(path).status_code == 200  # assets only: no data in them
            continue
        data = {"csrf": access.csrf} if method == "POST" else None
        for cookie in (None, "wrong-token"):
            c.cookies.clear()
            if cookie:
                c.cookies.set(COOKIE, cookie)
            answer = c.request(method, path, data=data, headers={"origin": ORIGIN})
            assert answer.status_code == 401, (method, path, answer.status_code)
            assert "dark mode" not in answer.text and "memoracle ui" in answer.text
    c.cookies.clear()
    assert c.get("/memories?token=wrong").status_code == 403
    with world.engine() as engine:  # nothing was changed by any of them
        assert engine.get(world.refs["dark"]).status == "active"
        assert not any(e.actor == "ui" for e in engine.audit_entries())


def test_the_printed_token_sets_a_strict_httponly_cookie(world: World) -> None:
    c, _ = client(world, logged_in=False)
    answer = c.get(f"/memories?token={TOKEN}&kind=fact", follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/memories?kind=fact"  # the token leaves the URL
    cookie = answer.headers["set-cookie"]
    assert f"{COOKIE}={TOKEN}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert c.get("/memories").status_code == 200


def test_another_host_name_gets_nothing(world: World) -> None:
    c, _ = client(world)
    answer = c.get("/memories", headers={"host": "rebound.example:8766"})
    assert answer.status_code == 400 and "dark mode" not in answer.text


def test_every_page_carries_a_strict_content_security_policy(world: World) -> None:
    c, _ = client(world)
    for path in ("/memories", f"/memories/{world.refs['dark']}", "/recall?q=x", "/review"):
        answer = c.get(path)
        assert answer.status_code == 200
        assert answer.headers["content-security-policy"] == CSP
        assert "'unsafe-inline'" not in CSP and "script-src 'self'" in CSP
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["cache-control"] == "no-store"
        assert "<script>" not in answer.text.replace('<script src="/static/app.js" defer>', "")


def test_a_change_without_csrf_or_from_another_origin_is_refused(world: World) -> None:
    c, access = client(world)
    ref = world.refs["dark"]
    path = f"/memories/{ref}/forget"
    refused = [
        c.post(path, data={}, headers={"origin": ORIGIN}),  # no CSRF token
        c.post(path, data={"csrf": "0" * 32}, headers={"origin": ORIGIN}),  # a wrong one
        c.post(path, data={"csrf": access.csrf}, headers={"origin": "http://evil.example"}),
        c.post(path, data={"csrf": access.csrf}, headers={"referer": "http://evil.example/x"}),
        c.post(path, data={"csrf": access.csrf}),  # neither Origin nor Referer
        c.post(path, json={"csrf": access.csrf}, headers={"origin": ORIGIN}),  # not a form
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    assert c.put(path, data={"csrf": access.csrf}, headers={"origin": ORIGIN}).status_code == 403
    with world.engine() as engine:
        assert engine.get(ref).status == "active"
    ok = c.post(path, data={"csrf": access.csrf}, headers={"referer": f"{ORIGIN}/memories/{ref}"})
    assert ok.status_code == 200
    with world.engine() as engine:
        assert engine.get(ref).status == "forgotten"


def test_html_in_a_memory_is_text(world: World) -> None:
    c, _ = client(world)
    pages = [
        c.get("/memories").text,
        c.get(f"/memories/{world.refs['script']}").text,
        c.get("/recall?q=cat+called+Mio+demo+plan").text,
        c.get("/review?describe=cat+Mio").text,
    ]
    for page in pages:
        assert "&lt;script&gt;window.__xss" in page
        assert "<script>window" not in page and "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages[0]
    assert SCRIPT.startswith("<script>") and HTML.startswith("My <b>")


@pytest.mark.parametrize(
    ("name", "words", "search"),
    [("bob", "Zebrastrasse", "spare bicycle depot"), ("group", "Quokka", "team offsite lodge")],
)
def test_another_persons_or_a_groups_memory_is_never_shown_nor_changed(
    world: World, name: str, words: str, search: str
) -> None:
    c, access = client(world)
    ref = world.refs[name]
    q = search.replace(" ", "+")
    for path in ("/memories?status=", f"/memories?q={q}", f"/recall?q={q}",
                 f"/review?describe={q}", "/review?duplicates=1", "/graph", "/health"):  # fmt: skip
        answer = c.get(path)
        assert answer.status_code == 200 and words not in answer.text, path
    asked = c.get(f"/graph?name={words}").text  # the name asked is echoed, nothing else
    assert 'id="entity"' not in asked and "No entity" in asked
    assert {"bob": SECRET, "group": GROUP}[name] not in asked
    by_url = c.get(f"/memories/{ref}")  # its id typed in the address
    assert by_url.status_code == 404 and words not in by_url.text
    assert "No memory" in by_url.text  # as for an id that does not exist
    for action in ("forget", "pin", "edit", "expiry", "restore"):
        fields = {"text": "x", "ttl": "1d", "pinned": "1"}
        assert post(c, access, f"/memories/{ref}/{action}", **fields) == 404, action
    assert post(c, access, f"/disputes/{ref}/resolve", decision="reject") == 404
    with world.engine() as engine:
        memory = engine.stored_memory(int(ref[2:]))
        assert memory is not None and memory.status == "active" and not memory.pinned
        assert memory.text == {"bob": SECRET, "group": GROUP}[name]
        assert memory.expires_at is None and memory.superseded_by is None
        assert not [e for e in engine.history(memory.id) if e.actor == "ui"]


def _actions(world: World, ref: str) -> list[tuple[str, str]]:
    with world.engine() as engine:
        entries = engine._store.audit.entries(memory_id=int(ref[2:]))
    return [(e.actor, e.action) for e in reversed(entries)]


def test_each_correction_goes_through_the_engine_and_is_audited_as_ui(world: World) -> None:
    c, access = client(world)
    dark = world.refs["dark"]
    assert post(c, access, f"/memories/{dark}/pin", pinned="1") == 303
    assert post(c, access, f"/memories/{dark}/expiry", ttl="7d") == 303
    assert post(c, access, f"/memories/{dark}/expiry", clear="1") == 303
    assert post(c, access, f"/memories/{dark}/forget") == 303
    assert post(c, access, f"/memories/{dark}/restore") == 303
    edited = c.post(
        f"/memories/{dark}/edit",
        data={"csrf": access.csrf, "text": "I prefer light mode.", "kind": "preference"},
        headers={"origin": ORIGIN},
        follow_redirects=False,
    )
    assert edited.status_code == 303
    new = re.match(r"/memories/(m_\d+)\?note=edited", edited.headers["location"])
    assert new is not None
    ui = [a for who, a in _actions(world, dark) if who == "ui"]
    assert ui[:5] == ["pin", "expiry", "expiry", "forget", "restore"] and ui[-1] == "edit"
    assert set(ui[5:-1]) <= {"supersede"}  # the new value settled the old one's slot too
    with world.engine() as engine:
        old, fresh = engine.get(dark), engine.get(new.group(1))
        assert old.status == "superseded" and old.superseded_by == fresh.id
        assert fresh.text == "I prefer light mode." and fresh.pinned
    assert ("ui", "add") in _actions(world, new.group(1))
    page = c.get(f"/memories/{new.group(1)}").text
    assert dark in page and "I prefer dark mode." in page  # what it replaced

    assert post(c, access, f"/held/{world.held}/approve") == 303
    paris = world.refs["paris"]
    assert post(c, access, f"/disputes/{paris}/resolve", decision="confirm") == 303
    assert ("ui", "resolve") in _actions(world, paris)
    with world.engine() as engine:
        (held,) = [h for h in engine.held_writes() if h.ref == world.held]
        assert held.decision == "confirm" and held.decided_by == "ui"
        assert engine.get(paris).status == "active"


def test_a_rejected_held_write_stays_held_and_says_who(world: World) -> None:
    c, access = client(world)
    assert post(c, access, f"/held/{world.held}/reject") == 303
    assert post(c, access, f"/held/{world.held}/approve") == 400  # already decided
    with world.engine() as engine:
        (held,) = engine.held_writes()
        assert (held.decision, held.decided_by) == ("reject", "ui")


def test_bad_input_names_its_field_and_changes_nothing(world: World) -> None:
    c, access = client(world)
    dark = world.refs["dark"]
    assert "since: not a date" in c.get("/memories?since=yesterday").text
    assert "kind: &#39;fish&#39; is not one of" in c.get("/memories?kind=fish").text
    answer = c.post(
        f"/memories/{dark}/expiry",
        data={"csrf": access.csrf, "ttl": "soon"},
        headers={"origin": ORIGIN},
    )
    assert answer.status_code == 400 and "ttl: not a duration" in answer.text
    assert post(c, access, f"/memories/{dark}/edit", text="  ") == 400
    assert post(c, access, "/memories/m_99999/forget") == 404
    assert _actions(world, dark) == [("capture", "add")]


def test_the_recall_preview_is_the_agents_block_and_boosts_nothing(world: World) -> None:
    c, _ = client(world)
    with world.engine() as engine:
        before = engine.get(world.refs["dark"])
        block = engine.recall("what mode do I prefer?")
    with world.engine() as engine:
        after_agent = engine.get(world.refs["dark"])
    page = c.get("/recall", params={"q": "what mode do I prefer?"}).text
    shown = re.search(r'<pre class="block" id="block">(.*?)</pre>', page, re.S)
    assert shown is not None
    assert html.unescape(shown.group(1)) == block.text
    assert "lexical (BM25) rank" in page and "a guardrail: every one" in page
    with world.engine() as engine:
        assert engine.get(world.refs["dark"]).access_count == after_agent.access_count
    assert after_agent.access_count == before.access_count + 1  # the agent's recall does


def test_the_memory_page_shows_where_it_came_from_and_why(world: World) -> None:
    c, _ = client(world)
    page = c.get(f"/memories/{world.refs['dark']}", params={"q": "dark mode"}).text
    assert "s-1" in page and "#1" in page  # the session and turn it came from
    assert "I prefer dark mode. Never push to main." in page  # the turn's text
    assert "rank <b>1</b>" in page and "lexical (BM25) rank 1" in page
    assert "capture" in page and "add" in page  # its audit history


def test_the_graph_and_the_subjects_offered_follow_every_change(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both are kept while nothing is written (`Ui.kept`): a second look reads neither
    again, and a write, by any other door or by the page itself, shows at once."""
    c, access = client(world)
    assert c.get("/graph").status_code == 200  # the page's engine opens
    lander = ui_of(c.app).engine().searcher.lander  # type: ignore[arg-type]
    assert lander is None or lander.wait_idle(30)  # its background vectors landed
    read: list[str] = []

    def counting(name: str) -> Any:
        real = getattr(browse, name)

        def counted(*args: Any, **kw: Any) -> Any:
            read.append(name)
            return real(*args, **kw)

        return counted

    for name in ("entities", "relations", "subjects"):
        monkeypatch.setattr(browse, name, counting(name))
    for _ in range(2):
        assert "Tarifa" not in c.get("/graph").text
        assert "Ziggy" not in _offered(c)
    assert sorted(read) == ["entities", "relations", "subjects"], read  # each read once
    with world.engine() as engine:  # another door writes
        said = Turn("user", "My brother Ziggy lives in Tarifa.", session_id="s-2", turn_id="1")
        (ziggy,) = engine.capture([said]).added
        engine.read_graph_backlog()
    assert ziggy.subject and "Ziggy" in ziggy.subject
    assert "Tarifa" in c.get("/graph").text
    assert "Ziggy" in _offered(c)
    assert post(c, access, f"/memories/{ziggy.ref}/forget") == 303  # the page writes
    assert "Ziggy" not in _offered(c)


def test_nothing_kept_answers_after_the_page_opens_the_store_again(world: World) -> None:
    """A generation counts one connection's writes: after a store error the page opens a
    new connection whose counts start again, so what it kept before is let go (another
    door's forget in between shows at once)."""
    c, _ = client(world)
    ui = ui_of(c.app)  # type: ignore[arg-type]
    assert "Anna" in _offered(c)
    lander = ui.engine().searcher.lander
    assert lander is None or lander.wait_idle(30)
    ui.close_engine()  # as a store error ('database is locked') does
    assert "Anna" in _offered(c)  # kept under this connection
    with world.engine() as engine:  # another door forgets her
        engine.forget(world.refs["anna"])
    ui.close_engine()  # another store error: the page opens the store again
    assert "Anna" not in _offered(c)


def _offered(c: TestClient) -> str:
    """The subjects the memories page's filter offers."""
    found = re.search(r'<datalist id="subjects">(.*?)</datalist>', c.get("/memories").text)
    assert found is not None
    return found.group(1)
