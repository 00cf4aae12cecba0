"""Train the write audit's learned decision (`memoracle.capture.injection.learned`) and
write its weights.

    python bench/train_injection.py [--dev PATH] [--train PATH]
        [--max-false 0.01] [--l2 0.1] [--out DIR] [--no-corpora]

Data (JSONL, one text a line: {"id", "lang", "category", "role", "text", "attack"}):

- `--train` (default ``bench/data/injection-train.jsonl``): texts written for this
  repository; ids starting ``own-`` are one source, ``probe-`` (the earlier probe sets of
  the write audit) another;
- `--dev` (default ``$MEMORACLE_INJECTION_DEV``, skipped when unset or missing): the
  write audit's dev set, a third source. Never a blind set.

Features: the default embedder's vector (USE) and `learned.cues`. One logistic head
(L2, Newton steps, classes weighted to balance), numpy only.

Honest measurement, leave one source out: each source is scored by a head trained on the
other sources only. For each, attacks held and benign texts held wrongly, per language,
by the rules alone, the head alone (asked only past `learned.gate`) and the combination
shipped (held if the rules hold, or if the rules leave the text clean, it passes the gate
and the head scores at or above the threshold). The threshold is the lowest of a grid
at which the benign texts the head alone adds to the rules' holds, pooled over the
held-out sources, stay at most `--max-false` (default 1 %). Then the
benign corpora of the repository (``capture-dev``, ``capture-train``, ``multilingual``)
and LoCoMo's turns (read where `_common.locomo_path` finds them, never copied) are
audited by the combination with the final head. The final head is trained on every
source and written to `--out` (default ``src/memoracle/data``) with its metadata. Same
data -> same weights (Newton steps, no randomness).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memoracle.capture.injection import classify
from memoracle.capture.injection.learned import META, WEIGHTS, cues, gate
from memoracle.embed.local import UseEmbedder

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "bench" / "data" / "injection-train.jsonl"
OUT = ROOT / "src" / "memoracle" / "data"
CORPORA = ("capture-dev.jsonl", "capture-train.jsonl", "multilingual.jsonl")
GRID = [round(t, 2) for t in np.arange(0.5, 0.99, 0.02)]
FIELDS = ("id", "lang", "category", "role", "text", "attack")


def read_set(path: Path) -> list[dict[str, Any]]:
    """The labelled texts of `path`; a malformed line raises naming its number."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [f for f in FIELDS if f not in row]
        if missing:
            raise SystemExit(f"{path}:{number}: missing field(s) {', '.join(missing)}")
        rows.append(row)
    return rows


def source_of(row: dict[str, Any]) -> str:
    ident = str(row["id"])
    return "probe" if ident.startswith("probe-") else "own" if ident.startswith("own-") else "dev"


def featurise(rows: list[dict[str, Any]], embedder: Any) -> np.ndarray:
    vectors = np.asarray(embedder.embed_documents([r["text"] for r in rows]), dtype=np.float64)
    extra = np.array([cues(r["text"], r["role"]) for r in rows], dtype=np.float64)
    return np.hstack([vectors, extra])


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """L2 logistic regression by Newton steps, classes weighted to balance."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = max(float(y.mean()), 1e-6)
    weight = np.where(y == 1, 0.5 / pos, 0.5 / max(1 - pos, 1e-6))
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(30):
        p = 1 / (1 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (weight * (p - y)) + reg @ w
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1], float(w[-1])


def predict(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30))))


def table(rows: list[dict[str, Any]], held: np.ndarray) -> dict[str, Any]:
    """Attacks held and benign held wrongly, per language and in all."""
    out: dict[str, Any] = {}
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[r["lang"]].append(i)
        groups["all"].append(i)
    for lang, idx in sorted(groups.items()):
        a = [i for i in idx if rows[i]["attack"]]
        b = [i for i in idx if not rows[i]["attack"]]
        out[lang] = {
            "attacks_held": f"{int(held[a].sum())}/{len(a)}",
            "benign_held": f"{int(held[b].sum())}/{len(b)}",
        }
    return out


def false_rate(rows: list[dict[str, Any]], held: np.ndarray) -> float:
    benign = np.array([not r["attack"] for r in rows])
    return float(held[benign].sum() / max(int(benign.sum()), 1))


def corpora_texts() -> list[tuple[str, str | None]]:
    """(text, role) of the benign corpora: the repository's capture sets and LoCoMo."""
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import locomo_path

    texts: list[tuple[str, str | None]] = []
    for name in CORPORA:
        for line in (ROOT / "bench" / "data" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                role = row.get("role")
                texts.append((str(row["text"]), role if role in ("assistant", "tool") else None))
    try:
        conversations = json.loads(locomo_path().read_text(encoding="utf-8"))
    except (OSError, SystemExit):
        return texts
    for conv in conversations:
        for value in conv["conversation"].values():
            if isinstance(value, list):
                texts.extend(
                    (t["text"], None) for t in value if isinstance(t, dict) and "text" in t
                )
    return texts


def audit_corpora(w: np.ndarray, b: float, threshold: float, embedder: Any) -> dict[str, Any]:
    texts = corpora_texts()
    rules = [classify(t, role=r).level != "clean" for t, r in texts]
    asked = [i for i, (t, r) in enumerate(texts) if not rules[i] and gate(t, r)]
    rows = [{"text": texts[i][0], "role": texts[i][1]} for i in asked]
    head = predict(featurise(rows, embedder), w, b) >= threshold if rows else np.zeros(0, bool)
    held = sum(rules) + int(head.sum())
    return {
        "texts": len(texts),
        "held_by_rules": sum(rules),
        "asked_head": len(asked),
        "held_by_head": int(head.sum()),
        "held_rate": round(held / max(len(texts), 1), 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--train", type=Path, default=TRAIN)
    parser.add_argument("--dev", type=Path, default=os.environ.get("MEMORACLE_INJECTION_DEV"))
    parser.add_argument("--max-false", type=float, default=0.01)
    parser.add_argument("--l2", type=float, default=0.1, help="ridge of the head")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-corpora", action="store_true", help="skip the benign corpora")
    args = parser.parse_args()

    rows = read_set(args.train)
    data = args.train.read_bytes()
    if args.dev is not None and Path(args.dev).exists():
        rows += read_set(Path(args.dev))
        data += Path(args.dev).read_bytes()
    embedder = UseEmbedder()
    x = featurise(rows, embedder)
    y = np.array([int(bool(r["attack"])) for r in rows])
    rules = np.array([classify(r["text"], lang=r["lang"], role=r["role"]).level != "clean"
                      for r in rows])  # fmt: skip
    asked = np.array([gate(r["text"], r["role"]) for r in rows])
    sources = np.array([source_of(r) for r in rows])

    held_out = np.zeros(len(rows))
    names = sorted(set(sources.tolist()))
    for name in names:
        train = sources != name
        if len(set(y[train].tolist())) < 2:
            continue
        w, b = fit(x[train], y[train].astype(np.float64), args.l2)
        held_out[~train] = predict(x[~train], w, b)
    scored = [n for n in names if len(set(sources.tolist()) - {n}) > 0]
    mask = np.isin(sources, scored)
    scored_rows = [r for r, m in zip(rows, mask, strict=True) if m]
    curve = []
    threshold = GRID[-1]
    for t in reversed(GRID):
        extra = (asked & (held_out >= t) & ~rules)[mask]
        false = false_rate(scored_rows, extra)
        caught = int(extra[y[mask] == 1].sum())
        curve.append({"threshold": t, "extra_attacks_held": caught, "extra_false_rate": false})
        if false <= args.max_false:
            threshold = t
    head = asked & (held_out >= threshold)
    report: dict[str, Any] = {}
    for name in scored:
        sel = sources == name
        part = [r for r, s in zip(rows, sel, strict=True) if s]
        report[name] = {
            "rules": table(part, rules[sel]),
            "head": table(part, head[sel]),
            "head_ungated": table(part, held_out[sel] >= threshold),
            "combined": table(part, (rules | head)[sel]),
        }

    w, b = fit(x, y.astype(np.float64), args.l2)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / WEIGHTS).open("wb") as out:
        np.savez_compressed(out, w=w.astype(np.float32), b=np.float32(b))
    meta: dict[str, Any] = {
        "embedder": embedder.model_id,
        "threshold": threshold,
        "features": f"{embedder.dim} embedding + {x.shape[1] - embedder.dim} cues",
        "l2": args.l2,
        "max_false": args.max_false,
        "data_sha256": hashlib.sha256(data).hexdigest(),
        "data": {n: int((sources == n).sum()) for n in names},
        "held_out": report,
        "held_out_curve": curve,
        "trained_by": "python bench/train_injection.py",
    }
    if not args.no_corpora:
        meta["benign_corpora"] = audit_corpora(w, b, threshold, embedder)
    (args.out / META).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", "utf-8")
    json.dump(meta, sys.stdout, indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
