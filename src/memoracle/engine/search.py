"""Retrieval over what a scope may see: hybrid search, the recall block (guardrails,
fresh items, search hits; never over the token budget), `explain`, and the vector index's
state (`index_status`, `reindex`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

from memoracle.capture.dates import find_dates
from memoracle.capture.lang import detect_language
from memoracle.config import Settings
from memoracle.engine import memories, settle
from memoracle.engine.scope import view_for
from memoracle.engine.state import EngineState, parse_ref
from memoracle.errors import (
    InvalidInput,
)
from memoracle.lifecycle import scoring
from memoracle.lifecycle.slots import DEFAULT_SUBJECT
from memoracle.recall import relevance
from memoracle.recall.budget import Same, format_line, pack
from memoracle.recall.hybrid import SearchOutcome, TimeWindow
from memoracle.recall.lists import MODES, Mode, list_weight
from memoracle.recall.query import is_when_question
from memoracle.recall.replaced import settle_replaced
from memoracle.recall.why import missing
from memoracle.recall.window import time_only
from memoracle.text import clean, content_hash, for_hash
from memoracle.types import (
    Episode,
    Explanation,
    Hit,
    IndexStatus,
    Memory,
    RecallBlock,
    RecallLine,
    Scope,
)

if TYPE_CHECKING:
    from memoracle.ingest.callbacks import OnProgress

EXPLAIN_DEPTH = 200
RECALL_DEPTH = 60  # search hits offered to the recall block's third slot
FRESH_DEPTH = 50  # fresh memories offered to the second slot (30 % of 2,000 tokens holds ~30)
ANSWERS = 2  # memories holding the asked attribute's value that may lead the block
ANSWER_SHARE = 0.1  # of the budget: one or two memory lines; what it leaves goes to search
# Longer queries are cut: a pasted document is not a question.
MAX_QUERY_CHARS = 2000


def index_status(st: EngineState) -> IndexStatus:
    """Which embedding model the store's vectors belong to, and whether search can
    use them: a model change makes search lexical-only until `reindex`."""
    models = st._store.index.vector_models()
    embedder = st.searcher.embedder
    if embedder is None:
        return IndexStatus(None, None, 0, 0, models, stale=False)
    have = models.get(embedder.model_id, (embedder.dim, 0))[1]
    missing = st._store.index.count_missing(embedder.model_id)
    stale = have == 0 and any(m != embedder.model_id for m in models)
    return IndexStatus(
        embedder.model_id,
        embedder.dim,
        have,
        missing,
        models,
        stale=stale,
        ann=st.searcher.ann_state(),
    )


def reindex(st: EngineState, *, on_progress: OnProgress | None = None) -> int:
    """`Engine.reindex`: how many live memories and turns were embedded (those without a
    vector for the configured model); the HNSW graph built too when the store wants one
    and it is missing or damaged."""
    searcher = st.searcher
    if searcher.embedder is None:
        raise InvalidInput("No embedding model is configured (embedding.provider).")
    total = st._store.index.count_missing(searcher.embedder.model_id)
    done = 0
    while done < total:
        step = searcher.embed_missing(now=st.clock.now(), limit=min(1024, total - done))
        if step == 0:
            break
        done += step
        if on_progress is not None:
            on_progress(done, total)
    st.vectors_stale = None
    searcher.build_graph_if_needed()
    return done


def search(
    st: EngineState,
    query: str,
    *,
    k: int | None = None,
    scope: Scope | None = None,
    kinds: Sequence[str] = (),
    as_of: datetime | None = None,
    mode: Mode = "hybrid",
) -> SearchOutcome:
    """Hybrid search (docs/retrieval.md) over what `scope` may see; only active memories unless
    `as_of`, which returns what was active then; `mode` "lexical" or "vector" searches
    with one kind of list only."""
    text = _query(st, query)
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    then = st.local_time(as_of) if as_of else None
    now = st.clock.now()
    view = view_for(st.settings, scope, kinds, then, now)
    searcher = st.searcher
    embedder = searcher.embedder
    stale = _model_changed(st)
    if stale and mode == "vector":
        raise InvalidInput(
            "The stored vectors are of another embedding model: a vector-only search "
            "has nothing to compare with until you run: memoracle reindex"
        )
    if stale:
        searcher.embedder = None
    try:
        window = _window(st, text, now)
        # The texts without a vector are stored first: the search itself only reads.
        landed = searcher.land_for_search(now=then or now, mode=mode, window=window)
        outcome = searcher.search(
            text,
            view=view,
            k=k or st.settings.search.k,
            now=then or now,
            window=window,
            when_question=is_when_question(text),
            mode=mode,
            landed=landed,
        )
    finally:
        searcher.embedder = embedder
    if as_of is None:  # asked about the past, an old value was true then
        turns = [h.id for h in outcome.hits if h.source == "episode"]
        replaced = st._store.memories.replaced_turns(turns) if turns else {}
        if replaced:
            outcome = replace(outcome, hits=tuple(settle_replaced(outcome.hits, replaced)))
    if stale and embedder is not None:
        return replace(
            outcome,
            note=f"embedding model changed to {embedder.model_id}: search is lexical-only "
            "until you run: memoracle reindex",
        )
    return outcome


def _model_changed(st: EngineState) -> bool:
    """Vectors exist only for other models (checked once per process and reindex)."""
    if st.vectors_stale is None:
        embedder = st.searcher.embedder
        models = st._store.index.vector_models()
        st.vectors_stale = embedder is not None and embedder.model_id not in models and bool(models)
    return st.vectors_stale


READONLY_NOTE = "read-only workspace: the recalled memories' use was not recorded"


def recall_budget(settings: Settings, budget: int | None) -> int:
    """The recall block's token budget: `budget`, or when None the setting
    ``recall.budget_tokens`` (the one place its default is read); `InvalidInput` unless
    it is a positive number of tokens."""
    budget = settings.recall.budget_tokens if budget is None else budget
    if budget <= 0:
        raise InvalidInput(f"The recall budget must be a positive number of tokens, not {budget}.")
    return budget


def recall(
    st: EngineState,
    message: str,
    *,
    budget: int | None = None,
    scope: Scope | None = None,
    boost: bool = True,
) -> RecallBlock:
    """`Engine.recall`: the block for a turn, never over `budget` tokens (default
    ``recall.budget_tokens``): the current answer, guardrails, fresh items and search
    hits, each a line `scope` may see; each memory in it gets its recall boost, unless
    `boost` is False (a preview: the web page's recall page)."""
    budget = recall_budget(st.settings, budget)
    settings = st.settings.recall
    now = st.clock.now()
    view = view_for(st.settings, scope, now=now)
    index, memories = st._store.index, st._store.memories
    guardrails = memories.get_many(index.guardrails(view))
    try:
        since = now - timedelta(hours=settings.fresh_hours)
    except OverflowError:  # a window reaching before year 1: everything is fresh
        since = datetime.min.replace(tzinfo=UTC)
    fresh = memories.get_many(index.fresh(view, since=since, limit=FRESH_DEPTH))
    text = clean(message).strip()
    outcome = search(st, text, k=RECALL_DEPTH, scope=scope) if text else None
    hits = {h.ref: h for h in outcome.hits} if outcome else {}
    # A message about one of the person's attributes ("where do I live?") is led by
    # the memories holding its current value, as the lifecycle reads them.
    asked = settle.asked_attribute(st, text) if text else None
    answers = (
        memories.get_many(index.holding(DEFAULT_SUBJECT, asked, view, limit=ANSWERS))
        if asked
        else []
    )
    # The rules the message touches first (a search hit, best first), then the others
    # by importance: a rule holds whatever the message. Fresh items only when the
    # message touches them (a search hit, past the per-hit floor; best first): a fresh
    # "charged my laptop at the café" does not lead the answer to "what is my dog called?".
    rank = {ref: i for i, ref in enumerate(hits)}
    guardrails.sort(key=lambda m: rank.get(m.ref, len(rank)))
    if outcome is not None and st.settings.search.hit_floor > relevance.OFF:
        fresh = sorted((m for m in fresh if m.ref in rank), key=lambda m: rank[m.ref])
    slots = [
        ("answer", ANSWER_SHARE, [(m.ref, _line(st, m.ref, m, None)) for m in answers]),
        (
            "guardrail",
            settings.guardrail_share,
            [(m.ref, _line(st, m.ref, m, None)) for m in guardrails],
        ),
        ("fresh", settings.fresh_share, [(m.ref, _line(st, m.ref, m, None)) for m in fresh]),
        (
            "search",
            settings.search_share,
            [(h.ref, _line(st, h.ref, h.memory, h.episode, h.replaced_at)) for h in hits.values()],
        ),
    ]
    offered_memories = answers + guardrails + fresh
    offered_memories += [h.memory for h in hits.values() if h.memory is not None]
    turns = [h.episode for h in hits.values() if h.episode is not None and h.memory is None]
    packed = pack(slots, budget, st.token_counter, same=same_items(offered_memories, turns))
    offered = {m.id: m for m in answers + guardrails + fresh}
    offered.update({h.memory.id: h.memory for h in hits.values() if h.memory is not None})
    recalled = [offered[int(line.ref[2:])] for line in packed.lines if line.ref.startswith("m_")]
    note = outcome.note if outcome else None
    if recalled and st._store.readonly:
        note = "; ".join(filter(None, [note, READONLY_NOTE]))
    elif recalled and boost:  # the recalled memories' owners' write, not the whole store's
        with st._store.transaction(scopes=[m.scope for m in recalled]):
            memories.recalled(boosted(recalled, now, st.settings), now=now)
    return RecallBlock(
        note=outcome.no_match if outcome else None,
        text=packed.text,
        lines=tuple(
            RecallLine(line.slot, line.ref, line.text, line.tokens, hits.get(line.ref))  # type: ignore[arg-type]
            for line in packed.lines
        ),
        budget=budget,
        tokens=packed.tokens,
        tokenizer=packed.tokenizer,
        degraded=note,
    )


def same_items(memories: Sequence[Memory], turns: Sequence[Episode]) -> dict[str, Same]:
    """What makes two lines of the block one item (`budget.pack`'s `same`): the same
    text, normalised (a turn captured twice, in two sessions, is two turns saying it),
    and a turn with the memory that came from it alone. Two memories of one turn stay
    two lines: they say different things."""
    same: dict[str, Same] = {}
    for m in memories:
        text = f"text:{for_hash(m.text)}"
        own = frozenset(f"from:{e}" for e in m.episode_ids)
        alone = frozenset(f"turn:{e}" for e in m.episode_ids) if len(m.episode_ids) == 1 else ()
        same[m.ref] = (own | {text}, frozenset({text, *alone}))
    for e in turns:
        text = f"text:{for_hash(e.text)}"
        same[f"e_{e.id}"] = (frozenset({text, f"turn:{e.id}"}), frozenset({text, f"from:{e.id}"}))
    return same


def boosted(recalled: Sequence[Memory], now: datetime, settings: Settings) -> dict[int, float]:
    """Each recalled memory's new activation: its activation decayed to `now` plus
    `recall.boost`, at most 1. Adding to the stored value would undo the decay (the
    stored value is the strength at the last access, 1.0 for a new memory), so every
    recall would reset a memory to full strength whatever the boost."""
    return {
        m.id: min(1.0, scoring.activation(m, now, settings.decay) + settings.recall.boost)
        for m in recalled
    }


def _line(
    st: EngineState,
    ref: str,
    memory: Memory | None,
    episode: Episode | None,
    replaced_at: datetime | None = None,
) -> str:
    """'- [m_12 2023-05-07] Caroline: text': dated, tagged, and whose words; a turn
    whose value was since replaced says so: '(earlier, until 2025-03)'."""
    if memory is not None:
        said = memory.details.get("dates") or []
        when = (
            date.fromisoformat(str(said[0]["start"])[:10])
            if said and (memory.valid_from or memory.due_at)
            else memory.observed_at.astimezone(st.zone).date()
        )
        who = memory.subject if memory.subject not in (None, "user", "assistant") else None
        # a statement that names its subject already ("Caroline: I …", "Sarah Chen
        # lives in Hamburg.") is not named twice
        text = f"{who}: {memory.text}" if who and not memory.text.startswith(who) else memory.text
        if memory.kind == "task" and memory.due_at:
            text = f"{text} (due {when.isoformat()})"
        return format_line(ref, text, when)
    assert episode is not None
    who = episode.speaker or episode.role
    text = f"{who}: {episode.text}"
    if replaced_at is not None:
        text = f"{text} (earlier, until {replaced_at.astimezone(st.zone):%Y-%m})"
    return format_line(ref, text, episode.at.astimezone(st.zone).date())


def explain(
    st: EngineState,
    ref: str,
    *,
    query: str,
    scope: Scope | None = None,
    kinds: Sequence[str] = (),
) -> Explanation:
    """`Engine.explain`: why `ref` (m_… or e_…) ranks where it does for `query`, signal
    by signal, or what kept it out (a filter, or the stage of the search where it fell
    out)."""
    text = ref.strip().lower()
    source = "episode" if text.startswith("e") else "memory"
    item_id = parse_ref(text, "e" if source == "episode" else "m")
    item: Memory | Episode
    if source == "memory":  # one another may not see is "No memory", as a missing one
        item = memories.get(st, item_id, scope=scope)
    else:
        item = memories.get_episode(st, item_id, scope=scope)
    outcome = search(st, query, k=EXPLAIN_DEPTH, scope=scope, kinds=kinds)
    said = _model_tag(item)
    for rank, hit in enumerate(outcome.hits, 1):
        if hit.source == source and hit.id == item_id:
            why = _reasons(st, hit, rank, outcome.mode)
            return Explanation(hit.ref, query, rank, hit, (*why, *said))
    reasons = [f"not returned ({outcome.mode} search, {EXPLAIN_DEPTH} deep)", *said]
    filtered = _filtered(st, item, tuple(kinds))
    if filtered:
        reasons += filtered
    elif outcome.trace is not None:
        key = (source, item_id)
        view = view_for(st.settings, scope, kinds, now=st.clock.now())
        reasons += missing(st.searcher, outcome.trace, key, view=view, content_hash=_hash(item))
    if outcome.note:
        reasons.append(outcome.note)
    if outcome.no_match:
        reasons.append(outcome.no_match)
    return Explanation(f"{source[0]}_{item_id}", query, None, None, tuple(reasons))


def _model_tag(item: Memory | Episode) -> list[str]:
    """What a nightly model step did to `item`, and why (docs/llm.md)."""
    tag = item.details.get("model") if isinstance(item, Memory) else None
    return (
        [f"{tag['change']} by model {tag['model']} ({tag['prompt']}): {tag['reason']}"]
        if tag
        else []
    )


def _hash(item: Memory | Episode) -> str:
    return item.content_hash if isinstance(item, Memory) else content_hash(item.text)


def _filtered(st: EngineState, item: Memory | Episode, kinds: tuple[str, ...]) -> list[str]:
    """The filters that keep `item` out of every search with `kinds`, each named: its
    status, a held turn, its kind. (An item out of the asker's scope never gets here:
    `explain` says "No memory" for it, as for a missing one.)"""
    found: list[str] = []
    if isinstance(item, Memory):
        ref = item.ref
        status = {
            "superseded": f"superseded by m_{item.superseded_by}"
            if item.superseded_by
            else "superseded",
            "disputed": f"disputed: a hedged statement put it in doubt (memoracle resolve {ref})",
            "archived": f"archived in the cold tier (memoracle restore {ref} brings it back)",
            "forgotten": "forgotten (kept, with an audit entry, never searched again)",
        }
        if item.status in status:
            found.append(
                f"filtered by status: {status[item.status]}; search sees active memories only"
            )
    else:
        if item.kind != "message":
            found.append(f"filtered by kind of turn: a {item.kind}; search reads messages only")
        held = [
            h
            for h in st._store.held.list(limit=100_000)
            if h.episode_id == item.id
            or (h.episode_id is not None and (h.text, h.scope) == (item.text, item.scope))
        ]
        for h in held:
            if h.decision is None:
                found.append(
                    f"held by the write audit ({h.ref}, {h.level}): out of search until "
                    f"memoracle audit --confirm {h.ref}"
                )
            elif h.decision == "reject":
                found.append(f"held by the write audit and rejected ({h.ref}): never searched")
    kind = item.kind if isinstance(item, Memory) else None
    if kind is not None and kinds and kind not in kinds:
        found.append(
            f"filtered by kind: it is a {kind}; the search asked for {', '.join(kinds)} only"
        )
    return found


def _query(st: EngineState, query: str) -> str:
    text = clean(query).strip()
    if not text:
        raise InvalidInput('The query is empty. Try: memoracle search "what I said about …"')
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS]
    return text


def _window(st: EngineState, query: str, now: datetime) -> TimeWindow | None:
    found = find_dates(
        query,
        st.anchor_time(now),
        detect_language(query),
        day_first=st.settings.workspace.day_first,
        behind=True,
    )
    if not found:
        return None
    only = time_only(query, [d.span for d in found])  # "what did I do yesterday?"
    return TimeWindow(found[0].start, found[0].end, only)


def _reasons(st: EngineState, hit: Hit, rank: int, mode: str) -> tuple[str, ...]:
    """The hit's rank, its signals and every factor of its final score, so that the
    product of the factors shown is the score shown: the lists' weighted RRF (each
    list's part named), the neighbours' share, the session and speaker factors,
    recency, activation and the time boost (docs/retrieval.md, "Explain")."""
    sc = hit.scores
    lines = [f"rank {rank} ({mode} search), final score {sc.final:.7g}"]
    lines.append(
        f"lexical (BM25) rank {sc.lexical_rank}" if sc.lexical_rank else "no lexical match"
    )
    if sc.vector_rank:
        lines.append(f"vector rank {sc.vector_rank}, cosine similarity {sc.similarity:.3f}")
    else:
        lines.append("not among the nearest vectors")
    if sc.via:
        lines.append(f"scored as its turn {sc.via} (a memory and its turn are one hit)")
    source = "episode" if sc.via or hit.source == "episode" else "memory"
    search, k = st.settings.search, st.settings.search.rrf_k
    parts: list[str] = []
    listed = 0.0
    for signal, r in (("lexical", sc.lexical_rank), ("vector", sc.vector_rank)):
        if r:
            weight = list_weight(source, signal, search.vector_weight, search.graph_weight)
            parts.append(f"{signal} {weight:g}/({k}+{r})")
            listed += weight / (k + r)
    fused = sc.rrf if sc.fused is None else sc.fused
    if fused - listed > 1e-12:  # the graph's list (entity expansion)
        parts.append(f"graph {fused - listed:.7g}")
    if sc.neighbours:
        parts.append(f"neighbour turns' share {sc.neighbours:.7g}")
    whole = fused + sc.neighbours
    lines.append(f"fused {whole:.7g} = " + " + ".join(parts or ["0"]))
    factors = (
        ("session", sc.session),
        ("speaker named", sc.speaker),
        ("recency", sc.recency),
        ("activation", sc.activation),
        ("time boost", sc.boost),
    )
    lines.append(f"rank fusion (RRF) {sc.rrf:.7g} = fused × session × speaker named")
    lines.append(
        f"final {sc.final:.7g} = fused {whole:.7g} × "
        + " × ".join(f"{name} {value:.7g}" for name, value in factors)
    )
    return tuple(lines)
