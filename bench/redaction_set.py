"""Redaction scored on a labelled JSONL corpus of secrets and benign look-alikes.

Each line of the corpus is one case:

    {"id": "s-017", "lang": "fr", "shape": "prose-wifi", "kind": "password",
     "turns": ["le mdp du wifi c'est Tournesol-88"], "needles": ["Tournesol-88"]}
    {"id": "b-004", "lang": "en", "shape": "code-getpass", "kind": "benign",
     "turns": ["password = getpass.getpass()"], "needles": []}

`turns` are the consecutive user turns of one conversation (a turn is a string, or an
object with "text" and an optional "role"); `needles` the strings that must not survive
anywhere (a secret case has at least one; a benign case none, and none of its turns may
be altered).

Per text (always): the case's turns go through `redact_turns` (each turn redacted, the
previous turn's open secret context carried to the next, as capture does); a secret
case leaks when one of its needles is left in the output; a benign case is altered
when one of its turns comes out changed. Counts by shape and by kind, per language,
and the time per text.

With --doors, every case goes in through each door of a fresh store of its own:
capture (`Engine.capture`, one turn a call, the case's turns in order in one session),
remember (each turn), checkpoint (the turns as one checkpoint text, as the CLI and MCP
write it), ingest of an OpenClaw session JSONL (one file per case) and of a generic
JSONL, MCP remember and checkpoint (`memoracle.mcp_server.tools`); then a backup, the
nightly run and an export. Every file under the home and the workspace is scanned for
the needles — as bytes, the SQLite files (the database, its WAL, the backups) also
through SQL (every table, the FTS tables' content and their terms), zstd or gzip files
decompressed — and so are the doors' own outputs and, in the capture door's store, a
search and a recall for each case (the stores hold the same texts; one is searched to
keep the run short). Leaks are counted by door, by place and by shape; a benign case is altered at a
door when what the door stored or returned for it holds a "[REDACTED:" marker.

    python bench/redaction_set.py PATH [--doors] [--show N] [--limit N]

Only aggregate counts are printed unless --show N asks for N examples of each failure.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoracle.capture.redact import redact


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    shape: str
    kind: str
    turns: tuple[tuple[str, str], ...]  # (role, text)
    needles: tuple[str, ...]

    @property
    def benign(self) -> bool:
        return self.kind == "benign"

    @property
    def texts(self) -> list[str]:
        return [text for _, text in self.turns]


class CorpusError(ValueError):
    """A corpus line that is not a case; the message names the file, line and field."""


def _field(where: str, record: dict[str, Any], name: str) -> Any:
    if name not in record:
        raise CorpusError(f"{where}: missing field {name!r}")
    return record[name]


def _turn(where: str, i: int, value: Any) -> tuple[str, str]:
    if isinstance(value, str):
        return ("user", value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        role = value.get("role", "user")
        if role not in ("user", "assistant"):
            raise CorpusError(f"{where}: turns[{i}].role must be 'user' or 'assistant'")
        return (role, value["text"])
    raise CorpusError(f"{where}: turns[{i}] must be a string or an object with 'text'")


def parse_case(where: str, line: str) -> Case:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise CorpusError(f"{where}: a case is a JSON object")
    strings = {}
    for name in ("id", "lang", "shape", "kind"):
        value = _field(where, record, name)
        if not isinstance(value, str) or not value:
            raise CorpusError(f"{where}: field {name!r} must be a non-empty string")
        strings[name] = value
    turns = _field(where, record, "turns")
    if not isinstance(turns, list) or not turns:
        raise CorpusError(f"{where}: field 'turns' must be a non-empty list")
    needles = _field(where, record, "needles")
    if not isinstance(needles, list) or not all(isinstance(n, str) and n for n in needles):
        raise CorpusError(f"{where}: field 'needles' must be a list of non-empty strings")
    if strings["kind"] == "benign" and needles:
        raise CorpusError(f"{where}: a benign case has no needles")
    if strings["kind"] != "benign" and not needles:
        raise CorpusError(f"{where}: a secret case needs at least one needle")
    return Case(
        id=strings["id"],
        lang=strings["lang"],
        shape=strings["shape"],
        kind=strings["kind"],
        turns=tuple(_turn(where, i, t) for i, t in enumerate(turns)),
        needles=tuple(needles),
    )


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            case = parse_case(f"{path}:{number}", line)
            if case.id in seen:
                raise CorpusError(f"{path}:{number}: field 'id': {case.id!r} is used twice")
            seen.add(case.id)
            cases.append(case)
    return cases


def redact_turns(texts: Sequence[str]) -> list[str]:
    """The turns of one conversation redacted as capture redacts them, in order: each
    with the one before it as stored (redacted), for a secret it left open."""
    out: list[str] = []
    for text in texts:
        out.append(redact(text, previous=out[-1] if out else None).text)
    return out


def leaked(text: str, needles: Iterable[str]) -> list[str]:
    """The needles found in `text` (case-insensitive: an index folds case). A needle of
    digits or of fewer than 8 characters counts only where no letter or digit touches
    it: "4821" is not leaked by a hash "…a4821f…" or an id "14821"."""
    low = text.casefold()
    found = []
    for needle in needles:
        n = needle.casefold()
        if n not in low:
            continue
        if len(n) >= 8 and not n.isdigit():
            found.append(needle)
        elif re.search(rf"(?<![^\W_]){re.escape(n)}(?![^\W_])", low):
            found.append(needle)
    return found


# ---------------------------------------------------------------- per text


@dataclass
class TextScore:
    secrets: int = 0
    benign: int = 0
    texts: int = 0
    seconds: float = 0.0
    leaks: list[tuple[Case, list[str]]] = field(default_factory=list)
    altered: list[tuple[Case, list[str]]] = field(default_factory=list)


def score_texts(cases: Sequence[Case]) -> TextScore:
    score = TextScore()
    for case in cases:
        started = time.perf_counter()
        out = redact_turns(case.texts)
        score.seconds += time.perf_counter() - started
        score.texts += len(out)
        if case.benign:
            score.benign += 1
            if out != case.texts:
                score.altered.append((case, out))
        else:
            score.secrets += 1
            if leaked("\n".join(out), case.needles):
                score.leaks.append((case, out))
    return score


def table(title: str, failed: Counter[str], total: Counter[str]) -> list[str]:
    lines = [f"  {title}:"]
    for key in sorted(total):
        if failed[key]:
            lines.append(f"    {key}: {failed[key]} of {total[key]}")
    if len(lines) == 1:
        lines.append("    none")
    return lines


def text_report(cases: Sequence[Case], score: TextScore, show: int) -> list[str]:
    secrets = [c for c in cases if not c.benign]
    benign = [c for c in cases if c.benign]
    lines = [
        f"cases: {len(cases)} ({len(secrets)} secret, {len(benign)} benign), turns: {score.texts}",
        f"per text: secrets leaked {len(score.leaks)} of {score.secrets}; "
        f"benign altered {len(score.altered)} of {score.benign}; "
        f"{score.seconds / max(score.texts, 1) * 1e6:.1f} µs a text",
    ]
    leaks = [c for c, _ in score.leaks]
    for title, key in (("by shape", "shape"), ("by kind", "kind")):
        lines += table(
            f"leaks {title}",
            Counter(getattr(c, key) for c in leaks),
            Counter(getattr(c, key) for c in secrets),
        )
    lines += table(
        "leaks by language", Counter(c.lang for c in leaks), Counter(c.lang for c in secrets)
    )
    lines += table(
        "benign altered by shape",
        Counter(c.shape for c, _ in score.altered),
        Counter(c.shape for c in benign),
    )
    for case, out in score.leaks[:show]:
        lines.append(f"  LEAK {case.id} {case.lang} {case.shape}/{case.kind}: {out!r}")
    for case, out in score.altered[:show]:
        lines.append(f"  ALTERED {case.id} {case.lang} {case.shape}: {out!r}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="the JSONL corpus")
    parser.add_argument(
        "--doors", action="store_true", help="also push every case through the doors"
    )
    parser.add_argument("--show", type=int, default=0, help="examples of each failure to print")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.path)
    except (CorpusError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cases = cases[: args.limit] if args.limit else cases
    print("\n".join(text_report(cases, score_texts(cases), args.show)))
    if args.doors:
        from redaction_doors import doors_report, run_doors

        with tempfile.TemporaryDirectory(prefix="redaction-set-") as tmp:
            score = run_doors(cases, Path(tmp))
        print("\n".join(doors_report(cases, score, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
