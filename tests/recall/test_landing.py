"""Vectors landed in the background (`recall.landing`, `Engine.land_vectors_in_background`,
`memoracle serve`): the worker stores and adds them without a search asking, a capture
returns while it embeds, a search meanwhile answers by words and says so, the visibility
rule holds for what it landed, and closing stops it with its batch stored."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.embed import Embedder
from memoracle.engine import Engine
from memoracle.recall.hybrid import LANDING_NOTE
from memoracle.recall.landing import THREAD_NAME
from memoracle.serve.server import WarmServer
from memoracle.store import Store
from memoracle.types import Scope, Turn

WAIT = 60.0  # seconds: a bound for a stuck worker, never a speed claim


class Gated:
    """The engine's real embedder, held at a gate while the test looks at the engine:
    the vectors are the real ones, only their moment is chosen. Only the background
    worker waits at the gate; capture's own embedding (its learned decision, merging by
    meaning) passes straight through, as it does not wait for the worker either."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.open = threading.Event()
        self.entered = threading.Event()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if threading.current_thread().name == THREAD_NAME:
            self.entered.set()
            assert self.open.wait(WAIT), "the test never opened the gate"
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.inner.embed_query(text)


def _turns(clock: FixedClock, texts: Sequence[str], session: str = "s1") -> list[Turn]:
    return [
        Turn("user", text, clock.now() + timedelta(minutes=i), session, str(i))
        for i, text in enumerate(texts)
    ]


def _missing(engine: Engine) -> int:
    embedder = engine.searcher.embedder
    assert embedder is not None
    return engine.vectors_missing(embedder.model_id)


def _gated(engine: Engine) -> Gated:
    inner = engine.searcher.embedder
    assert inner is not None
    gated = Gated(inner)
    engine.searcher.embedder = gated
    return gated


def test_the_worker_lands_vectors_without_a_search(engine: Engine, clock: FixedClock) -> None:
    assert engine.land_vectors_in_background()
    engine.capture(_turns(clock, ["My sister Lena moved to Lisbon in May.", "I prefer tea."]))
    lander = engine.searcher.lander
    assert lander is not None and lander.wait_idle(WAIT)
    assert _missing(engine) == 0 and lander.landed >= 2
    # The search embeds nothing itself now: the vector it finds is the worker's.
    outcome = engine.search("Lena Lisbon", k=5)
    assert outcome.mode == "hybrid" and outcome.note is None
    assert outcome.trace is not None and outcome.trace.vector


def test_texts_said_twice_do_not_stop_the_worker_early(engine: Engine, clock: FixedClock) -> None:
    # A batch of rows holding the same text twice embeds it once: fewer texts than
    # rows, which is not the end of what is missing.
    assert engine.land_vectors_in_background()
    said = [f"The spare key number {n // 2} is in drawer {n // 2}." for n in range(300)]
    engine.capture(_turns(clock, said))
    lander = engine.searcher.lander
    assert lander is not None and lander.wait_idle(WAIT)
    assert _missing(engine) == 0


def test_a_capture_returns_while_the_worker_embeds(engine: Engine, clock: FixedClock) -> None:
    gated = _gated(engine)
    assert engine.land_vectors_in_background()
    lander = engine.searcher.lander
    assert lander is not None
    engine.capture(_turns(clock, ["The staging server moved to the Riga office."]))
    assert gated.entered.wait(WAIT)  # the worker holds the batch, the capture returned
    assert _missing(engine) == 1 and lander.busy
    # A search meanwhile finds the turn by its words and says the vectors are coming.
    outcome = engine.search("staging server Riga", k=5)
    assert [h.text for h in outcome.hits][:1] == ["The staging server moved to the Riga office."]
    assert outcome.note == LANDING_NOTE
    # Another capture does not wait either; both land once the gate opens.
    engine.capture(_turns(clock, ["Oleg lent me his telescope until June."], "s2"))
    gated.open.set()
    assert lander.wait_idle(WAIT)
    assert _missing(engine) == 0 and not lander.busy
    assert engine.search("staging server Riga", k=5).note is None


def test_what_the_worker_landed_is_seen_only_by_whom_may(engine: Engine, clock: FixedClock) -> None:
    assert engine.land_vectors_in_background()
    alice = Scope("a", "alice")
    engine.capture(_turns(clock, ["Alice keeps the spare key under the blue pot."]), scope=alice)
    lander = engine.searcher.lander
    assert lander is not None and lander.wait_idle(WAIT) and _missing(engine) == 0
    query = "Alice keeps the spare key under the blue pot."
    seen = engine.search(query, k=5, scope=alice)
    assert seen.hits and seen.trace is not None and seen.trace.vector
    other = engine.search(query, k=5, scope=Scope("b", "bob"))
    assert other.hits == () and other.no_match is not None and "no vectors" in other.no_match


def test_closing_stores_the_batch_in_hand_and_leaves_no_thread(
    settings: Settings, clock: FixedClock
) -> None:
    Engine.init(settings, clock=clock)
    before = set(threading.enumerate())
    engine = Engine.open(settings, clock=clock)
    gated = _gated(engine)
    assert engine.land_vectors_in_background()
    engine.capture(_turns(clock, ["We agreed with Marc to move the NAS to the office."]))
    assert gated.entered.wait(WAIT)
    assert engine.search("Marc NAS office", k=3).hits  # the query's own thread starts
    closing = threading.Thread(target=engine.close)
    closing.start()  # waits for the batch in hand ...
    gated.open.set()  # ... which is embedded and stored before the connection closes
    closing.join(WAIT)
    assert not closing.is_alive()
    assert not _ours(set(threading.enumerate()) - before)
    with Engine.open(settings, clock=clock) as again:
        assert _missing(again) == 0


def test_an_engine_that_did_not_opt_in_embeds_at_search_as_before(
    engine: Engine, clock: FixedClock
) -> None:
    engine.capture(_turns(clock, ["Yuki booked the hotel in Kyoto."]))
    assert engine.searcher.lander is None and _missing(engine) == 1
    assert engine.search("Yuki hotel Kyoto", k=5).mode == "hybrid"
    assert _missing(engine) == 0


def test_a_read_only_store_lands_nothing(settings: Settings, clock: FixedClock) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.capture(_turns(clock, ["Greta's birthday is on March 3."]))
    store = Store.open(settings.db_path, now=clock.now(), readonly=True)
    with Engine(settings, store, clock) as readonly:
        assert not readonly.land_vectors_in_background()


def test_serve_lands_vectors_between_requests(settings: Settings, clock: FixedClock) -> None:
    Engine.init(settings, clock=clock)
    before = set(threading.enumerate())
    server = WarmServer(settings, clock=clock)
    try:
        turn = {"user": "Nadia works at the clinic now."}
        reply = server.answer(json.dumps({"op": "capture", "turns": turn}))
        assert reply["ok"], reply
        lander = server.engine().searcher.lander
        assert lander is not None and lander.wait_idle(WAIT)
        status = server.answer('{"op": "status"}')
        assert status["ok"] and status["result"]["index"]["missing"] == 0
        background = status["result"]["vectors_in_background"]
        assert background == {"busy": False, "landed": lander.landed, "error": None}
        assert lander.landed >= 1
    finally:
        server.close()
    assert not _ours(set(threading.enumerate()) - before)


def _ours(threads: set[threading.Thread]) -> list[str]:
    """The names of memoracle's own threads among `threads` (alive ones only)."""
    return [t.name for t in threads if t.name.startswith("memoracle-") and t.is_alive()]
