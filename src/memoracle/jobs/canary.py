"""The canary probe: questions with known answers, asked again to see if memory still
answers them (docs/lifecycle.md).

Owns `canary.json` in HOME — a JSON list of ``{"query", "expect", "added_at"}`` —, read
strictly (`load`: a bad file is an InvalidInput naming where it is bad) and appended to
atomically (`add`), or one entry taken out (`remove`, the file as it was kept in
`canary.json.bak` first); and the probe: each query is searched, and it passes when the
expected text is in one of the first `search.k` hits (case, Unicode forms and
whitespace aside). Under `health.canary_warn_ratio` passing, the report warns.

The probe searches; it does not recall. `Engine.recall` raises the activation of every
memory it returns and restarts its decay, with no way not to, so a weekly probe through
it would keep exactly the canaries' facts from fading and then report them as
remembered; its fresh slot would also pass a canary on recency alone. `Engine.search`
changes no memory (it only embeds texts that have no vector yet, as any search does),
and its first `search.k` hits are the ones recall's search slot starts with (ten lines
of ordinary length take a few hundred of its 1,200 tokens). When to probe (`memoracle
health --probe`, the weekly `schedule.probe`) and how to show the report are the caller's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memoracle.clock import as_utc, parse_instant
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, WorkspaceError
from memoracle.files import write_atomically
from memoracle.serialize import records
from memoracle.text import for_hash

__all__ = [
    "BACKUP_FILE",
    "CANARY_FILE",
    "Canary",
    "CanaryResult",
    "ProbeReport",
    "add",
    "load",
    "probe",
    "remove",
]

CANARY_FILE = "canary.json"  # in HOME
BACKUP_FILE = "canary.json.bak"  # beside it: the file as it was before the last `remove`
_EXAMPLE = 'memoracle canary add "When did the fleet project start?" --expect "May 15"'


@dataclass(frozen=True)
class Canary:
    """A question memory should keep answering: `expect` must appear in what `query`
    finds."""

    query: str
    expect: str
    added_at: datetime

    def to_json(self) -> dict[str, object]:
        return records.fields(self)


@dataclass(frozen=True)
class CanaryResult:
    """One canary asked. When it passed, `ref` is the hit holding the expected text
    ("m_12", "e_40") and `rank` its place among the hits, from 1; else both are None."""

    query: str
    expect: str
    passed: bool
    ref: str | None = None
    rank: int | None = None

    def to_json(self) -> dict[str, object]:
        return records.fields(self)


@dataclass(frozen=True)
class ProbeReport:
    """Every canary's result. `ratio` is None when there is no canary; `warn` when it is
    under `threshold` (`health.canary_warn_ratio`). `note` says why search was degraded
    (lexical only, say), which can explain failures."""

    results: tuple[CanaryResult, ...]
    threshold: float
    note: str | None = None

    @property
    def total(self) -> int:
        return len(self.results)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def ratio(self) -> float | None:
        return self.passed / self.total if self.results else None

    @property
    def warn(self) -> bool:
        return self.ratio is not None and self.ratio < self.threshold

    def to_json(self) -> dict[str, object]:
        return {
            "total": self.total,
            "passed": self.passed,
            "ratio": None if self.ratio is None else round(self.ratio, 4),
            "threshold": self.threshold,
            "warn": self.warn,
            "note": self.note,
            "results": [r.to_json() for r in self.results],
        }


def load(path: Path) -> list[Canary]:
    """The canaries in `path`, in file order; none when there is no file. A file that is
    not a JSON list of valid entries is an InvalidInput saying where (line and column,
    or the entry's index and field); one that cannot be read, a WorkspaceError."""
    return _read(path)[1]


def add(path: Path, query: str, expect: str, *, now: datetime) -> Canary:
    """Append a canary to `path` (created if missing) and return it. Written atomically
    (a temp file, then a rename); other entries and their unknown fields are kept as
    they are. Refuses (InvalidInput) an empty query or expected text, a file `load`
    refuses, and a canary already there (same query and expected text, case and
    whitespace aside: the probe could not tell them apart)."""
    query, expect = " ".join(query.split()), " ".join(expect.split())
    for name, value in (("query", query), ("expected text", expect)):
        if not for_hash(value):
            raise InvalidInput(f"The canary's {name} is empty. Try: {_EXAMPLE}")
    entries, canaries = _read(path)
    key = (for_hash(query), for_hash(expect))
    for index, old in enumerate(canaries):
        if (for_hash(old.query), for_hash(old.expect)) == key:
            raise InvalidInput(
                f"{path}: entry [{index}] already asks {old.query!r} expecting "
                f"{old.expect!r}; nothing was added."
            )
    canary = Canary(query, expect, as_utc(now))
    write_atomically(
        path, json.dumps([*entries, canary.to_json()], indent=2, ensure_ascii=False) + "\n"
    )
    return canary


def remove(path: Path, which: str, *, dry_run: bool = False) -> tuple[int, Canary]:
    """Take one canary out of `path` and return its number (from 1, as `memoracle canary
    list` shows it) and the canary. `which` is that number or the canary's query (case,
    Unicode forms and whitespace aside). Before the file is rewritten (atomically, every
    other entry and its unknown fields as they were), its old text is copied to
    `canary.json.bak` beside it; with `dry_run` nothing is written. Refuses
    (InvalidInput) a number out of range, a query no canary asks, and a query several
    canaries ask (the numbers tell them apart)."""
    entries, canaries = _read(path)
    index = _find(path, canaries, which)
    if not dry_run:
        backup = path.with_name(BACKUP_FILE)
        write_atomically(backup, path.read_bytes().decode("utf-8"))
        rest = entries[:index] + entries[index + 1 :]
        write_atomically(path, json.dumps(rest, indent=2, ensure_ascii=False) + "\n")
    return index + 1, canaries[index]


def _find(path: Path, canaries: Sequence[Canary], which: str) -> int:
    """The index of the canary `which` names: a number from 1, or a query."""
    listing = "`memoracle canary list` numbers them"
    if which.strip().isdigit():
        number = int(which)
        if not 1 <= number <= len(canaries):
            raise InvalidInput(
                f"{path}: there is no canary {number} (the file holds {len(canaries)}); {listing}."
            )
        return number - 1
    want = for_hash(which)
    found = [i for i, c in enumerate(canaries) if for_hash(c.query) == want]
    if not found:
        raise InvalidInput(f"{path}: no canary asks {which!r}; {listing}.")
    if len(found) > 1:
        numbers = ", ".join(str(i + 1) for i in found)
        raise InvalidInput(
            f"{path}: canaries {numbers} all ask {which!r}; remove one by its number."
        )
    return found[0]


def probe(engine: Engine, canaries: Sequence[Canary]) -> ProbeReport:
    """Search each canary's query and look for its expected text in the first
    `search.k` hits. Changes no memory (see the module docstring for why not recall)."""
    k = engine.settings.search.k
    results: list[CanaryResult] = []
    note: str | None = None
    for canary in canaries:
        outcome = engine.search(canary.query, k=k)
        note = note or outcome.note
        want = for_hash(canary.expect)
        found = next(
            (
                CanaryResult(canary.query, canary.expect, True, hit.ref, rank)
                for rank, hit in enumerate(outcome.hits, 1)
                if want in for_hash(hit.text)
            ),
            CanaryResult(canary.query, canary.expect, False),
        )
        results.append(found)
    return ProbeReport(tuple(results), engine.settings.health.canary_warn_ratio, note)


def _read(path: Path) -> tuple[list[object], list[Canary]]:
    """The file's entries as parsed (kept by `add`) and as canaries."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return [], []
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path}: not UTF-8 text (byte {exc.start + 1}). Save it as UTF-8."
        ) from None
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot read it ({exc.strerror or exc}); check its permissions."
        ) from None
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{path}: not valid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg}). "
            f"Fix it there; `{_EXAMPLE}` writes a valid entry."
        ) from None
    except RecursionError:
        raise InvalidInput(f"{path}: not valid JSON (nested too deeply).") from None
    if not isinstance(entries, list):
        raise InvalidInput(
            f'{path}: expected a JSON list of {{"query", "expect", "added_at"}} entries, '
            f"found a {type(entries).__name__}."
        )
    return entries, [_canary(path, index, entry) for index, entry in enumerate(entries)]


def _canary(path: Path, index: int, entry: object) -> Canary:
    if not isinstance(entry, dict):
        raise InvalidInput(
            f'{path}: entry [{index}] is a {type(entry).__name__}, not an object with "query", '
            '"expect" and "added_at".'
        )
    values: dict[str, str] = {}
    for field in ("query", "expect", "added_at"):
        if field not in entry:
            raise InvalidInput(
                f'{path}: entry [{index}] has no "{field}"; each entry needs "query", '
                '"expect" and "added_at".'
            )
        value = entry[field]
        if not isinstance(value, str) or not for_hash(value):
            raise InvalidInput(
                f'{path}: entry [{index}]: "{field}" must be a non-empty string, '
                f"not {json.dumps(value, ensure_ascii=False)}."
            )
        values[field] = value
    try:
        added_at = as_utc(parse_instant(values["added_at"]))
    except ValueError:
        raise InvalidInput(
            f'{path}: entry [{index}]: "added_at" must be an ISO 8601 time like '
            f'"2026-05-15T09:30:00+00:00", not "{values["added_at"]}".'
        ) from None
    return Canary(values["query"], values["expect"], added_at)
