"""The web page in a real browser (Debian's chromium, driven by Playwright): a person
browses, searches, edits, forgets, approves a held write and reads the audit; finds why
a memory was recalled and corrects it in a fixed number of clicks; and a memory holding
a script shows it as text, never running it. The screenshots of docs/ui.md are taken
here (UI_SCREENSHOTS=docs/ui writes them there; elsewhere to a temp folder).

Slow: a server and a browser. CI installs the browser (`make browser`, .ci/run)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from ui_world import SCRIPT, TOKEN, World, build_world

from memoracle.ui import Access, build_app

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    if os.environ.get("UI_BROWSER_SKIP"):  # .ci/run: apt could not be reached
        pytest.skip(os.environ["UI_BROWSER_SKIP"], allow_module_level=True)
    if os.environ.get("CI"):  # CI installs it: missing there is a failure, not a skip
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run's `make browser` should install it")
    pytest.skip(f"{CHROMIUM} is not installed: run `make browser`", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (dev extra)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, world: World) -> None:
        self.world = world
        self.port = _free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        access = Access.for_address(TOKEN, "127.0.0.1", self.port)
        app = build_app(world.settings, access=access, clock=world.clock)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_config=None, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the page's server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with Served(build_world(tmp_path)) as s:
        yield s


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
            viewport={"width": 1100, "height": 720},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("UI_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _page(browser: Any, served: Served) -> Any:
    """A page logged in through the printed URL, failing on any dialog (a script ran)."""
    page = browser.new_page()

    def dialog(d: Any) -> None:
        d.dismiss()
        pytest.fail(f"a dialog opened ({d.message!r}): a script from stored text ran")

    page.on("dialog", dialog)
    page.goto(f"{served.origin}/memories?token={TOKEN}")
    assert page.url == f"{served.origin}/memories"  # the token left the URL
    return page


def _shot(page: Any, shots: Path, name: str) -> None:
    path = shots / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 5_000


def test_browse_search_edit_forget_approve_and_read_the_audit(
    browser: Any, served: Served, shots: Path
) -> None:
    page = _page(browser, served)
    refs = served.world.refs
    assert page.locator("table.list tbody tr").count() >= 6
    _shot(page, shots, "memories")
    page.select_option("select[name=kind]", "guardrail")  # submits by itself (app.js)
    page.wait_for_url("**kind=guardrail**")
    assert page.locator("table.list tbody tr").count() == 1
    assert "Never push to main." in page.inner_text("table.list")

    page.click("nav >> text=Recall")
    page.fill("input[name=q]", "which mode do I prefer")
    page.click("button:has-text('Recall')")
    assert "I prefer dark mode." in page.inner_text("#block")
    _shot(page, shots, "recall")

    page.goto(f"{served.origin}/memories/{refs['anna']}")
    page.click("text=Edit text or kind")
    page.fill("textarea[name=text]", "My sister Anna lives in Marseille.")
    page.click("button[name=save]")
    assert "Saved as a new memory" in page.inner_text(".note")
    assert "Marseille" in page.inner_text("#text")
    new_ref = page.url.split("/memories/")[1].split("?")[0]
    page.goto(f"{served.origin}/memories/{refs['anna']}")
    assert f"Superseded by {new_ref}" in page.inner_text(".replaced")
    history = page.inner_text("table.audit")
    assert "ui" in history and "edit" in history
    _shot(page, shots, "memory")

    page.goto(f"{served.origin}/memories/{refs['html']}")
    page.click("button:has-text('Forget')")
    assert "Forgotten." in page.inner_text(".note")
    assert page.locator("button:has-text('Restore')").count() == 1

    page.click("nav >> text=Review")
    _shot(page, shots, "review")
    page.click(f"#{served.world.held} button:has-text('Approve')")
    assert "Approved" in page.inner_text(".note")
    assert page.locator(f"#{served.world.held}").count() == 0

    with served.world.engine() as engine:
        ui = [(e.action, e.memory_id) for e in engine.audit_entries() if e.actor == "ui"]
        assert {"edit", "add", "forget", "confirm-held"} <= {a for a, _ in ui}
        assert ("forget", int(refs["html"][2:])) in ui
        assert ("edit", int(refs["anna"][2:])) in ui
        (held,) = [h for h in engine.held_writes() if h.ref == served.world.held]
        assert held.decided_by == "ui"

    page.click("nav >> text=Health")
    page.click("button:has-text('Check now')")
    assert "Health checked." in page.inner_text(".note")
    _shot(page, shots, "health")
    page.click("nav >> text=Graph")
    _shot(page, shots, "graph")


def test_why_a_memory_was_recalled_and_correcting_it_takes_four_clicks(
    browser: Any, served: Served
) -> None:
    """From the memories page, a person who never saw the CLI: Recall (1), type the
    message and press Recall (2), click the line's id (3) — the memory's page says why
    it came up and opens its editor — type the correction and Save (4)."""
    page = _page(browser, served)
    clicks = 0

    def click(selector: str) -> None:
        nonlocal clicks
        clicks += 1
        page.click(selector)

    click("nav >> text=Recall")
    page.fill("input[name=q]", "where does my sister live?")
    click("button:has-text('Recall')")
    line = page.locator("ol.lines li", has_text="Lyon").first
    ref = line.locator("a.ref").inner_text()
    click(f"ol.lines a.ref:text-is('{ref}')")
    why = page.inner_text("#why")
    assert "where does my sister live?" in why and "rank" in why
    assert "lexical (BM25) rank" in why
    page.fill("textarea[name=text]", "My sister Anna lives in Nantes.")
    click("button[name=save]")
    assert clicks == 4
    assert "Saved as a new memory" in page.inner_text(".note")
    with served.world.engine() as engine:
        old = engine.get(ref)
        assert old.status == "superseded"
        new = engine.get(old.superseded_by or 0)
        assert new.text == "My sister Anna lives in Nantes." and new.status == "active"


def test_a_script_in_a_memory_is_shown_as_text_and_never_runs(browser: Any, served: Served) -> None:
    page = _page(browser, served)
    ref = served.world.refs["script"]
    for path in (
        "/memories",
        f"/memories/{ref}",
        "/recall?q=cat+called+Mio",
        "/review?describe=Mio",
    ):
        page.goto(served.origin + path)
        assert page.evaluate("() => window.__xss") is None, path
        assert "<script>window.__xss" in page.inner_text("main"), path
    assert page.locator("main script").count() == 0
    assert SCRIPT in page.inner_text("main") or "cat is called Mio" in page.inner_text("main")
