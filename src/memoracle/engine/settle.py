"""Settling by meaning, beside the slots (`write.settle_slots`): a report that finishes an open
task, a change of plan that replaces the plan it changes, a negation said without a new
value, and the memories a "forget …" describes. The words are `lifecycle.meaning`'s
(data), the SQL `store`'s; docs/lifecycle.md says what each does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from memoracle.engine.near import vectors_of
from memoracle.engine.state import EngineState
from memoracle.errors import EngineError
from memoracle.files import write_atomically
from memoracle.lifecycle.attributes import reader_for, values_in
from memoracle.lifecycle.meaning import (
    change_of_plan,
    described,
    keeps_alive,
    only_repeats,
    overlap,
    reports_done,
)
from memoracle.lifecycle.slots import DEFAULT_SUBJECT, Slot, slots_of, value_key
from memoracle.recall.fallback import FORGOTTEN_FILE
from memoracle.storage_types import View
from memoracle.text import content_hash
from memoracle.types import Memory, NewMemory, Scope

__all__ = [
    "ATTRIBUTE_COSINE",
    "ATTRIBUTE_MARGIN",
    "PLANS",
    "also_described",
    "asked_attribute",
    "by_attribute",
    "described_memories",
    "finish_tasks",
    "replace_plan",
    "turns_to_hide",
    "unclaimed",
    "write_forgotten_marks",
]

PLANS = ("decision", "event", "task")  # what a change of plan may replace
UNCLAIMED = "settle.slot"  # the rule of a memory `unclaimed` makes
_WINDOW = 200  # the owner's newest live memories looked at
PLAN_WINDOW = timedelta(days=30)  # how far back a change of plan looks for its plan
_UNCLEAR = 3  # more plans than this with nothing to tell them apart: none is disputed
# Slots a plain statement of is worth a memory on its own, even when no memory filled
# them yet and the capture rules kept nothing ("La réunion d'équipe est mardi", "Моя
# жена — Анна"): an appointment's day (an event, a plan), who one's partner is, and
# where a named project stands ("Project Atlas is on hold", "le projet Hermès est en pause").
STANDING = {"due": "event", "partner": "fact", "project_status": "fact"}
# Attributes by meaning (`by_attribute`): how alike a statement must be to an attribute's
# prototypes (the mean cosine of its two closest, the default model's unit vectors), and
# by how much more than to the runner-up (another attribute, or the sentences that state
# none), before it is read as that attribute. Chosen on bench/data/lifecycle-dev.jsonl.
ATTRIBUTE_COSINE = 0.25
ATTRIBUTE_MARGIN = 0.03
RELATIONS = ("manager", "partner", "pet")  # a statement about one is the speaker's too
ATTRIBUTE_KINDS = ("fact", "event", "preference")  # what states an attribute (not a task)
_VALUE_CHARS = 80  # a reading without a name keeps its words, this many, as its value


def _owned(st: EngineState, scope: Scope, *, kinds: Sequence[str] = ()) -> list[Memory]:
    """The owner's newest live memories (exactly this agent, user and chat)."""
    view = View(scope, now=st.clock.now())
    owner = (scope.agent, scope.user, scope.chat)
    found: list[Memory] = []
    for kind in kinds or (None,):
        found += st._store.memories.select(kind=kind, status="active", limit=_WINDOW, view=view)
    return [m for m in found if (m.scope.agent, m.scope.user, m.scope.chat) == owner]


def finish_tasks(
    st: EngineState,
    text: str,
    scope: Scope,
    *,
    subject: str | None,
    now: datetime,
    actor: str,
    by: str,
) -> list[int]:
    """Mark done every open task of the owner and subject that `text` reports finished
    ("I need to finish the tax return", then "j'ai fini la déclaration" … in its own
    language): `details.done` true, an audit `done`. A task about nobody in particular
    ("TODO: update the README") is the user's. The ids marked."""
    marked: list[int] = []
    for task in _owned(st, scope, kinds=("task",)):
        mine = task.subject == subject or (task.subject is None and subject == "user")
        if task.details.get("done") or not mine or task.text == text:
            continue
        if reports_done(task.text, text):
            st._store.memories.set_details(task.id, {**task.details, "done": True, "done_by": by})
            st._store.audit.append(
                at=now, actor=actor, action="done", memory_id=task.id, detail={"by": by}
            )
            marked.append(task.id)
    return marked


def replace_plan(
    st: EngineState, memory_id: int, new: NewMemory, *, now: datetime, actor: str
) -> str | None:
    """A change of plan ("change of plans — we'll host on Cloudflare Pages instead",
    "планы поменялись: деплоим на Render") replaces the plan it changes: of the owner's live
    plans (decisions, dated events, tasks) of the same subject said in the last
    `PLAN_WINDOW`, the one sharing most words with it, else the only plan of its kind.
    A few with nothing to tell them apart: the newest is disputed (`pending`) rather
    than guessed; more, none. Returns the action."""
    # A change that capture read as a plain fact ("we switched to MySQL for the
    # backend"), or did not read at all (`unclaimed`), replaces only a plan it shares
    # words with: "I switched to oat milk" is no change to "we'll deploy on Vercel",
    # however alone that plan is.
    as_fact = new.kind == "fact" or new.rule == UNCLAIMED
    if (new.kind not in PLANS and not as_fact) or not change_of_plan(new.text):
        return None
    since = new.observed_at - PLAN_WINDOW
    plans = [
        m
        for m in _owned(st, scope=new.scope, kinds=PLANS)
        if m.id != memory_id
        and m.subject == new.subject
        and since <= m.observed_at <= new.observed_at
        and (_ahead(m) or (m.valid_from is None and _names(new, m)))
    ]  # an undated event is a plan only when the change names it
    if not plans:
        return None
    scored = sorted(((overlap(new.text, m.text), m) for m in plans), key=lambda p: -p[0])
    same_kind = [m for m in plans if m.kind == new.kind]
    if scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        old, action = scored[0][1], "supersede"
    elif as_fact:
        return None
    elif len(same_kind) == 1:
        old, action = same_kind[0], "supersede"
    elif 1 < len(same_kind or plans) <= _UNCLEAR:
        old, action = max(same_kind or plans, key=lambda m: (m.observed_at, m.id)), "dispute"
    else:  # too many to point at one: leave them be
        return None
    if action == "supersede":
        st._store.memories.supersede(old.id, memory_id, now=now)
        link(st, memory_id, old.id)
    else:
        st._store.memories.set_status(old.id, "disputed", now=now)
    st._store.audit.append(
        at=now,
        actor=actor,
        action=action,
        memory_id=old.id,
        detail={"by": f"m_{memory_id}", "reason": "change of plan"},
    )
    return action


def _names(new: NewMemory, old: Memory) -> bool:
    """Whether a change names an undated plan: two words in common, or the day of the
    same appointment ("La réunion d'équipe est mardi", then "La réunion est reportée à
    jeudi": `due:` slots whose topics share a word)."""
    if overlap(new.text, old.text) >= 2:
        return True
    words = [
        {
            word
            for s in slots_of(m.text, lang=m.lang)
            if s.attribute.startswith("due:")
            for word in s.attribute.partition(":")[2].split()
        }
        for m in (new, old)
    ]
    return bool(words[0] & words[1])


def _ahead(memory: Memory) -> bool:
    """Whether a memory is a plan, something still ahead when it was said: a decision,
    a task, or an event that ends after that day ("I was bored today, so …" is no plan
    a later "pushed back" could change)."""
    if memory.kind != "event":
        return True
    end = memory.valid_to or memory.valid_from  # "this summer": still ahead in July
    return end is not None and (end - timedelta(seconds=1)).date() > memory.observed_at.date()


def link(st: EngineState, memory_id: int, old_id: int) -> None:
    """The replacing memory names what it replaced (`details.supersedes`), the other
    direction of the old one's `superseded_by`."""
    memory = st.memory(memory_id)
    before = list(memory.details.get("supersedes") or [])
    if f"m_{old_id}" not in before:
        details = {**memory.details, "supersedes": [*before, f"m_{old_id}"]}
        st._store.memories.set_details(memory_id, details)


def unclaimed(
    st: EngineState,
    text: str,
    *,
    lang: str | None,
    speaker: str | None,
    observed_at: datetime,
    scope: Scope,
) -> tuple[NewMemory, tuple[Slot, ...]] | None:
    """A turn the capture rules kept nothing of that still settles a slot: it denies one
    ("I no longer live in Paris", "je n'habite plus à Lille") or gives a new value to
    one a live memory of the owner fills ("I switched to a Pixel 8" after "I use an
    iPhone 12"), or changes a plan the owner has ("планы поменялись: деплоим на
    Render"), or plainly fills a `STANDING` slot (an appointment's day, a partner).
    The memory to store (a decision for a change of plan, an event for an appointment,
    else a fact), with its slots, so settling it ends what it replaces; None for
    anything hedged, or about another slot or plan nobody had."""
    slots = slots_of(text, lang=lang, speaker=speaker)
    if any(s.hedged for s in slots):
        return None
    held = st._store.memories.in_slot
    standing = [STANDING.get(s.attribute.partition(":")[0]) for s in slots if not s.negated]
    if slots and all(s.negated or held(s.subject, s.attribute, scope, exclude=0) for s in slots):
        kind = "fact"
    elif change_of_plan(text) and any(
        overlap(text, m.text) > 0 for m in _owned(st, scope, kinds=PLANS)
    ):  # a plan it names: replace_plan asks no less of a turn no rule read
        kind = "decision"
    elif standing and all(standing):
        kind = "event" if "event" in standing else "fact"
    elif slots and all(not s.negated and _someone_named(s.subject, speaker) for s in slots):
        kind = "fact"  # "Sarah Chen lives in Hamburg.", "Marco is vegan."
    else:
        return None
    named = {s.subject for s in slots if _someone_named(s.subject, speaker)}
    return (
        NewMemory(
            kind=kind,
            text=text,
            layer="episodic" if kind == "event" else "semantic",
            source="capture",
            observed_at=observed_at,
            content_hash=content_hash(text),
            scope=scope,
            importance=0.5,
            confidence=0.8,
            lang=lang,
            rule=UNCLAIMED,
            subject=_as_said(named.pop(), text) if len(named) == 1 else None,
        ),
        slots,
    )


def _someone_named(subject: str, speaker: str | None) -> bool:
    """A slot's subject is a person named in the words, not the speaker nor a relative
    without a name ("user's wife")."""
    return subject not in ("user", (speaker or "").casefold()) and "'s " not in subject


def _as_said(key: str, text: str) -> str:
    """A subject's key ("sarah chen") as the text writes it ("Sarah Chen")."""
    found = re.search(re.escape(key), text, re.IGNORECASE)
    return found.group(0) if found else key


def described_memories(
    st: EngineState,
    description: str,
    scope: Scope | None,
    *,
    view: View | None = None,
    lang: str | None = None,
) -> tuple[list[Memory], list[Memory]]:
    """(what `description` means, candidates when that is unclear): the owner's live
    memories (`scope`; None: every owner's that `view`, when given, may see) that speak
    of every naming word of the description, in any language ("my old job" -> "I work
    at Oracle"); when none does, those that speak of some of them are candidates, or
    the one that speaks of most. The view is applied in the store's query, so what its
    requester cannot see never weighs in (a hidden memory that fits fully would hide
    their own candidates). Each memory is read in its own language, the description in
    `lang` (else detected): `meaning.described`."""
    if scope is None:
        now = st.clock.now()
        memories = [
            m
            for m in st._store.memories.select(status="active", limit=100_000, view=view)
            if m.expires_at is None or m.expires_at > now
        ]
    else:
        memories = _owned(st, scope)
    full: list[Memory] = []
    partial: list[tuple[float, Memory]] = []
    for memory in memories:
        hit, wanted = described(description, memory.text, asked_in=lang, lang=memory.lang)
        if wanted and hit == wanted:
            full.append(memory)
        elif hit:
            partial.append((hit / wanted, memory))
    if full:
        return full, []
    partial.sort(key=lambda p: -p[0])
    if len(partial) == 1 and partial[0][0] >= 0.5:
        return [partial[0][1]], []
    return [], [m for _, m in partial]


def also_described(
    st: EngineState,
    description: str,
    ids: Sequence[int],
    scope: Scope | None,
    *,
    view: View | None = None,
    lang: str | None = None,
) -> list[int]:
    """The memories besides `ids` (found holding every word of `description`) that it
    describes wholly too, by meaning (`described_memories`), every word of it counted
    ("old office" does not describe "our new office"): "forget my dog" holds the words
    of "My dog is called Toby" and describes "Rex (User's dog) is three" as well, so it
    is not one memory but two, and a person says which."""
    meant, _ = described_memories(st, description, scope, view=view, lang=lang)
    return [
        m.id
        for m in meant
        if m.id not in ids
        and (fit := described(description, m.text, asked_in=lang, lang=m.lang, whole=True))[0]
        == fit[1]
    ]


def by_attribute(
    st: EngineState, memory_id: int, new: NewMemory, *, now: datetime, actor: str
) -> list[Slot]:
    """The slot a statement no slot rule read fills by meaning (`lifecycle.attributes`):
    the attribute whose prototypes are closest to it and the one name it holds ("got the
    keys to the new place in Sheffield": the speaker lives_in sheffield), for
    `write.settle_slots` to supersede the older value with. Unsure (the runner-up close
    behind, no name or two of them), the slot is hedged, with the name or else the
    statement's own words as its value: it disputes an older value (`memoracle pending`)
    instead of replacing it, and a later sure reading replaces it. The reading is
    audited (`read`: attribute, cosine, margin, value, why unsure). The speaker's own
    statements only, by the store's embedder (the new memory's vector, embedded once
    for this and `near.same_meaning`); a statement about one of the speaker's people
    ("у нас новая начальница — Марина") is read only as the speaker's relation to them
    (manager, partner, pet). None without an embedder."""
    embedder = st.searcher.embedder
    kin = (new.subject or "").startswith(f"{DEFAULT_SUBJECT}'s ")  # "user's начальница"
    if embedder is None or not (kin or new.subject == DEFAULT_SUBJECT):
        return []
    if new.kind not in ATTRIBUTE_KINDS:
        return []
    try:
        vector = vectors_of(st, embedder, [(new.content_hash, new.text)])[new.content_hash]
        reading = reader_for(embedder).read(vector)
    except EngineError:  # an embedding service is down: the rules' slots only
        return []
    if reading is None or reading.cosine < ATTRIBUTE_COSINE:
        return []
    if new.predicate == "uses" and not reading.attribute.startswith("uses"):
        return []  # a capture rule read a tool ("trabajo con Terraform"), not an employer
    if kin and reading.attribute not in RELATIONS:
        return []  # what the speaker's sister does is not the speaker's
    values = values_in(new.text, new.lang)
    unsure = (
        "close to another attribute"
        if reading.margin < ATTRIBUTE_MARGIN
        else "no name for the value"
        if not values
        else "two names for the value"
        if len(values) > 1
        else ""
    )
    value = value_key(values[0]) if len(values) == 1 else ""
    value = value or value_key(new.text)[:_VALUE_CHARS]
    if not value:
        return []
    detail = {
        "attribute": reading.attribute,
        "value": value,
        "cosine": round(reading.cosine, 3),
        "margin": round(reading.margin, 3),
        "unsure": unsure or None,
    }
    st._store.audit.append(at=now, actor=actor, action="read", memory_id=memory_id, detail=detail)
    return [Slot(DEFAULT_SUBJECT, reading.attribute, value, hedged=bool(unsure))]


def asked_attribute(st: EngineState, message: str) -> str | None:
    """The speaker's attribute `message` asks or speaks about, read by meaning as
    `by_attribute` reads a statement and only when that reading would be sure ("where
    do I live?", "¿dónde vivo?": lives_in; "как зовут мою собаку?": pet), for recall
    to lead with the memory holding its current value. None without an embedder, when
    it fails, or when the message is about no attribute ("can I upgrade the database
    tomorrow?")."""
    embedder = st.searcher.embedder
    if embedder is None or not message.strip():
        return None
    try:
        reading = reader_for(embedder).read(embedder.embed_documents([message])[0])
    except EngineError:
        return None
    if reading is None or reading.cosine < ATTRIBUTE_COSINE or reading.margin < ATTRIBUTE_MARGIN:
        return None
    return reading.attribute


_REPEATS = 200  # the owner's newest turns sharing a word with a forgotten memory, looked at


def turns_to_hide(st: EngineState, memory: Memory, *, said_in: int | None = None) -> list[int]:
    """The turns besides a memory's own sources that would keep it alive once it is
    forgotten: the owner's turns that only repeat it (`meaning.only_repeats`: "Toby is
    my dog.", "Noted: your dog is called Toby."), and the turn `said_in` that asked to
    forget it when that turn repeats it beyond the topic it names ("forget that my dog
    is called Toby"; "forget what I told you about my dog" stays: `meaning.keeps_alive`).
    Linked to the memory (provenance), they leave search and recall with it, and come
    back with it on `restore` (docs/lifecycle.md)."""
    own = set(memory.episode_ids)
    found: list[int] = []
    if said_in is not None and said_in not in own:
        said = st._store.episodes.get(said_in)
        if said is not None and keeps_alive(said.text, memory.text):
            found.append(said_in)
    for turn in st._store.episodes.with_a_word_of(memory.text, memory.scope, limit=_REPEATS):
        if turn.id in own or turn.id in found:
            continue
        if only_repeats(turn.text, memory.text, subject=memory.subject):
            found.append(turn.id)
    return found


def write_forgotten_marks(st: EngineState) -> None:
    """`HOME/forgotten.txt`: the refs of forgotten memories and the content hashes of
    their texts and turns (never the texts), for the recall over the files
    (`recall.fallback`) to leave out what the database would, when the database is
    what broke — MEMORY.md and the daily notes hold them until the next night. Rewritten
    whole after every forget and restore; nothing for a read-only store."""
    if st._store.readonly:
        return
    path = st._store.folder / FORGOTTEN_FILE  # HOME, or a dry run's scratch folder
    forgotten = st._store.memories.select(status="forgotten", limit=10_000_000)
    if not forgotten and not path.exists():
        return
    lines = ["# memoracle: forgotten memories, left out of the recall over the files"]
    turns = st._store.episodes.get_many(sorted({e for m in forgotten for e in m.episode_ids}))
    lines += sorted({m.ref for m in forgotten})
    texts = [*(m.text for m in forgotten), *(e.text for e in turns)]
    lines += sorted({content_hash(t) for t in texts})
    write_atomically(path, "\n".join(lines) + "\n")
