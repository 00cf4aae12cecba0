"""What every part of the engine shares: the settings, the store, the clock and the
lazily built searcher, token counter and ontology (`EngineState`, which `Engine` is), and
the small lookups they all use — a memory by id, the caller's scope filled in from the
settings, a turn's time in the workspace zone, a run recorded. `parse_ref` reads ids.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypeVar

from memoracle.capture.classify import Classifier
from memoracle.capture.classify import load as load_classifier
from memoracle.capture.injection import learned
from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.embed import Embedder, make_embedder
from memoracle.embed.core import Vector
from memoracle.embed.memo import Memo
from memoracle.errors import (
    EngineError,
    InvalidInput,
    NotFound,
)
from memoracle.graph.ontology import Ontology, load_ontology
from memoracle.language import compiled
from memoracle.recall.budget import TokenCounter, default_counter
from memoracle.recall.hybrid import Searcher
from memoracle.store.protocols import StoreBackend
from memoracle.types import (
    Memory,
)
from memoracle.workspace import CACHE_DIR, MODELS_DIR

log = logging.getLogger(__name__)
T = TypeVar("T")

ONTOLOGY_FILE = "ontology.yaml"  # in HOME: the user's entity and relation types, added


MAX_ID = 2**63 - 1  # SQLite's largest rowid: a bigger number names nothing


def parse_ref(ref: str | int, prefix: str = "m") -> int:
    """'m_42', 'm42' or '42' -> 42; anything else is InvalidInput."""
    text = str(ref).strip().lower()
    for head in (f"{prefix}_", prefix):
        if text.startswith(head):
            text = text[len(head) :]
            break
    if not text.isdigit() or int(text) > MAX_ID:
        raise InvalidInput(f"Not a {prefix}_ id: {ref!r}. Ids look like {prefix}_42.")
    return int(text)


class EngineState:
    """The engine's shared state and the lookups every part uses; `Engine` is one."""

    def __init__(self, settings: Settings, store: StoreBackend, clock: Clock) -> None:
        self.settings = settings
        compiled.keep_in(settings.home / CACHE_DIR)  # rule regexes kept compiled
        self._store = store
        self.clock = clock
        self.zone = settings.zone
        self._searcher: Searcher | None = None
        self._token_counter: TokenCounter | None = None
        self.vectors_stale: bool | None = None  # the store's vectors are another model's
        self._ontology: Ontology | None = None
        self._embedder_made = False
        self._embedder_one: Embedder | None = None
        self._classifier: Classifier | None | bool = False  # False: not asked yet
        self._injection_head: learned.Head | None | bool = False  # likewise
        # The vectors this store's engine embedded to compare by meaning (`near`), by
        # (model, content hash): a long-running process (a server, an import) embeds
        # each text once. Per store: two stores in one process never share it.
        self.embedded: dict[tuple[str, str], Vector] = {}

    def local_time(self, at: datetime) -> datetime:
        """A time without an offset is a wall-clock time in the workspace timezone."""
        return at if at.tzinfo is not None else at.replace(tzinfo=self.zone)

    def anchor_time(self, at: datetime) -> datetime:
        """Where relative dates are counted from: the turn's own offset if it said one,
        else the workspace timezone (a bare UTC stamp says nothing about the speaker)."""
        return at.astimezone(self.zone) if at.utcoffset() == timedelta(0) else at

    def start_run(self, kind: str) -> int:
        """Open a job record (nightly steps): its start time; `finish_run` closes it."""
        with self._store.transaction():
            return self._store.runs.start(kind, now=self.clock.now())

    def finish_run(
        self, run: int, status: str, counts: dict[str, int], error: str | None = None
    ) -> None:
        with self._store.transaction():
            self._store.runs.finish(
                run, now=self.clock.now(), status=status, counts=counts, error=error
            )

    def memory(self, ref: str | int) -> Memory:
        """The memory `ref` names, whoever's it is (for the write paths; reads go
        through `Engine.get`, which applies the visibility rule)."""
        memory_id = parse_ref(ref)
        memory = self._store.memories.get(memory_id)
        if memory is None:
            raise NotFound(f"No memory 'm_{memory_id}'. Try: memoracle list, or memoracle search")
        return memory

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(self._store, self.settings, self._embedder())
        return self._searcher

    def _embedder(self) -> Embedder | None:
        """The store's embedder, made once (the searcher and capture share it), behind a
        `Memo`: a text embedded as a document is embedded once in this process."""
        if not self._embedder_made:
            e = self.settings.embedding
            name = e.model if e.provider == "local" else e.provider
            self._embedder_one = (
                None
                if e.provider in ("", "none")
                else Memo(
                    make_embedder(
                        name,
                        endpoint=e.endpoint,
                        model=e.model,
                        cache_dir=self.settings.home / MODELS_DIR,
                    )
                )
            )
            self._embedder_made = True
        return self._embedder_one

    @property
    def classifier(self) -> Classifier | None:
        """Capture's learned decision, when `capture.classifier` is on and the store's
        embedder is the one it was trained for (else None, said once in the log)."""
        if self._classifier is False:
            on = self.settings.capture.classifier
            self._classifier = self._learned(on, load_classifier, "capture classifier")
        assert not isinstance(self._classifier, bool)
        return self._classifier

    @property
    def injection_head(self) -> learned.Head | None:
        """The write audit's learned decision, when `capture.injection_model` is on and
        the store's embedder is the one it was trained for (else None: rules only)."""
        if self._injection_head is False:
            on = self.settings.capture.injection_model
            self._injection_head = self._learned(on, learned.load, "injection head")
        assert not isinstance(self._injection_head, bool)
        return self._injection_head

    def _learned(
        self, on: bool, load: Callable[[Embedder | None], T | None], what: str
    ) -> T | None:
        """A learned decision over the store's embedder, when `on` (None when off, or when
        the embedder cannot be made: said once in the log, rules only)."""
        if not on:
            return None
        try:
            embedder = self._embedder()
        except EngineError as exc:  # e.g. the model's package is missing
            log.warning("%s off (%s): rules only", what, exc)
            return None
        return load(embedder)

    @property
    def token_counter(self) -> TokenCounter:
        if self._token_counter is None:
            self._token_counter = default_counter(self.settings.home / CACHE_DIR)
        return self._token_counter

    @property
    def ontology(self) -> Ontology:
        """The entity and relation types: the defaults, plus HOME/ontology.yaml if it
        exists (`InvalidInput` naming its file and line when it is wrong)."""
        if self._ontology is None:
            path = self.settings.home / ONTOLOGY_FILE
            self._ontology = load_ontology(path if path.exists() else None)
        return self._ontology
