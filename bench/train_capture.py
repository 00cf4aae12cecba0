"""Train capture's learned decision (`memoracle.capture.classify`) and write its weights.

    python bench/train_capture.py [--folds 5] [--seed 13] [--min-precision 0.95] [--no-dev]

`--no-dev` trains the final model on the templates alone (threshold still chosen by the
cross-validation on dev), so the whole dev set can then be scored end to end by a model
that never saw it (`memoracle bench capture bench/data/capture-dev.jsonl --embedder use
--learned`); run without it again to restore the shipped weights (same bytes).

Data, all written for this repository (never the blind sets, never LoCoMo):

- templated sentences from `capture_templates.py` (EN/RU/FR/ES, written to
  `bench/data/capture-train.jsonl` for inspection): label and kind given;
- the dev set `bench/data/capture-dev.jsonl`: each person's turn goes through the rules
  (`extract`), and in a turn they made nothing of, every sentence they leave as
  ``no_match`` and that is not `barred` (exactly what the decision is asked at run
  time) is labelled 1 when it contains an expected value of its turn,
  else 0; its kind is the expected one (decision -> fact, task -> event).

Features: the default embedder's vector (USE) and `classify.cues`. Two heads, numpy
only: keep (logistic regression, L2, Newton steps) and kind (softmax, gradient steps).
The threshold is chosen on the dev set by k-fold cross-validation over turns (each fold
scored by a model trained on the templates and the other folds; only the best sentence
of a turn counts, as at run time): of the thresholds whose
cross-validated precision is at least `--min-precision`, those with the best recall, and
of these the highest (the same dev recall with the widest margin against keeping
sentences unlike any seen, which is where precision was lost on unseen sets). The final model is
trained on everything and written to `src/memoracle/data/` with its metadata (embedder,
threshold, data hash, held-out numbers). Same seed, same data -> same weights.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from capture_templates import generate

from memoracle.capture.classify import KINDS, META, WEIGHTS, barred, cues
from memoracle.capture.extract import extract
from memoracle.capture.rules import default_rules
from memoracle.embed.local import UseEmbedder
from memoracle.jobs.bench.capture_set import folded, read_cases

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "bench" / "data" / "capture-dev.jsonl"
TRAIN = ROOT / "bench" / "data" / "capture-train.jsonl"
OUT = ROOT / "src" / "memoracle" / "data"
CURVE_KEYS = ("threshold", "precision", "recall", "kept")
KIND_OF = {"fact": "fact", "preference": "preference", "event": "event", "decision": "fact",
           "task": "event"}  # fmt: skip


def dev_rows() -> list[dict[str, Any]]:
    """The dev set's unmatched sentences of people's turns, labelled (module doc)."""
    rows = []
    rules = default_rules()
    for case in read_cases(DEV):
        if case.role == "assistant":
            continue
        found = extract(case.text, role=case.role, speaker=case.speaker)
        if found.candidates:  # a turn the rules or cues made something of is not asked
            continue
        for text, lang in found.unmatched:
            if barred(text, rules.get(lang)):  # never asked at run time
                continue
            hits = [e for e in case.expected if folded(e.value) in folded(text)]
            kind = KIND_OF.get(hits[0].kind, "fact") if hits else ""
            rows.append(
                {"text": text, "lang": lang, "label": int(bool(hits)), "kind": kind,
                 "group": case.id}
            )  # fmt: skip
    return rows


def featurise(rows: list[dict[str, Any]], embedder: UseEmbedder) -> np.ndarray:
    rules = default_rules()
    vectors = embedder.embed_documents([r["text"] for r in rows])
    extra = np.array([cues(r["text"], rules.get(r["lang"])) for r in rows], dtype=np.float32)
    return np.hstack([vectors, extra]).astype(np.float64)


def fit_keep(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """L2 logistic regression by Newton steps, classes weighted to balance."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = max(y.mean(), 1e-6)
    weight = np.where(y == 1, 0.5 / pos, 0.5 / max(1 - pos, 1e-6))
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(25):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (weight * (p - y)) + reg @ w
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w[:-1], float(w[-1])


def fit_kind(x: np.ndarray, k: np.ndarray, l2: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """Softmax regression over `KINDS` by plain gradient steps (deterministic)."""
    n, d = x.shape
    w = np.zeros((d, len(KINDS)))
    b = np.zeros(len(KINDS))
    onehot = np.eye(len(KINDS))[k]
    for _ in range(400):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = p - onehot
        w -= 0.5 * (x.T @ g / n + l2 * w)
        b -= 0.5 * g.mean(axis=0)
    return w, b


def predict(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-(x @ w + b))))


def scores_at(p: np.ndarray, y: np.ndarray, t: float) -> dict[str, float]:
    kept = p >= t
    tp = int((kept & (y == 1)).sum())
    return {
        "threshold": round(t, 3),
        "precision": round(tp / max(int(kept.sum()), 1), 3),
        "recall": round(tp / max(int((y == 1).sum()), 1), 3),
        "kept": int(kept.sum()),
        "positives": int((y == 1).sum()),
        "sentences": len(y),
    }


def best_of_turn(p: np.ndarray, groups: list[str]) -> np.ndarray:
    """`p` with every sentence but the best of its turn set to 0: at run time at most one
    sentence a turn is kept (`Classifier.keep_one`), so dev is scored the same way."""
    best: dict[str, int] = {}
    for i, g in enumerate(groups):
        if g not in best or p[i] > p[best[g]]:
            best[g] = i
    out = np.zeros_like(p)
    keep = list(best.values())
    out[keep] = p[keep]
    return out


def choose_threshold(p: np.ndarray, y: np.ndarray, grid: list[float], floor: float) -> float:
    """The highest threshold of `grid` with the best recall among those whose precision
    is at least `floor` (the module doc says why); the top of the grid when none is."""
    ok = [(scores_at(p, y, t)["recall"], t) for t in grid]
    ok = [(r, t) for r, t in ok if scores_at(p, y, t)["precision"] >= floor]
    if not ok:
        return grid[-1]
    best = max(r for r, _ in ok)
    return max(t for r, t in ok if r == best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--min-precision", type=float, default=0.95)
    parser.add_argument("--no-dev", action="store_true", help="final model: templates only")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    templated = generate(args.seed)
    TRAIN.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in templated), encoding="utf-8"
    )
    dev = dev_rows()
    embedder = UseEmbedder()
    xt, xd = featurise(templated, embedder), featurise(dev, embedder)
    yt = np.array([r["label"] for r in templated])
    yd = np.array([r["label"] for r in dev])
    kt = np.array([KINDS.index(r["kind"]) if r["label"] else 0 for r in templated])
    kd = np.array([KINDS.index(r["kind"]) if r["label"] else 0 for r in dev])

    # Cross-validation over dev turns: every dev sentence scored by a model that never saw
    # its turn.
    groups = sorted({r["group"] for r in dev})
    fold_of = dict(zip(groups, rng.permutation(len(groups)) % args.folds, strict=True))
    folds = np.array([fold_of[r["group"]] for r in dev])
    cv = np.zeros(len(dev))
    for f in range(args.folds):
        train = folds != f
        w, b = fit_keep(np.vstack([xt, xd[train]]), np.concatenate([yt, yd[train]]))
        cv[~train] = predict(xd[~train], w, b)
    cv = best_of_turn(cv, [r["group"] for r in dev])
    grid = [round(t, 2) for t in np.arange(0.3, 0.96, 0.01)]
    threshold = choose_threshold(cv, yd, grid, args.min_precision)
    # Templates alone, a held-out fifth (how well the templated task itself is learned).
    order = rng.permutation(len(templated))
    held = order[: len(order) // 5]
    rest = order[len(order) // 5 :]
    w, b = fit_keep(xt[rest], yt[rest])
    templates_held = scores_at(predict(xt[held], w, b), yt[held], 0.5)
    rules_only = {"dev_sentences_positive": int(yd.sum()), "dev_sentences": len(yd)}

    if args.no_dev:
        x_all, y_all, k_all = xt, yt, kt
    else:
        x_all, y_all, k_all = (
            np.vstack([xt, xd]),
            np.concatenate([yt, yd]),
            np.concatenate([kt, kd]),
        )
    keep_w, keep_b = fit_keep(x_all, y_all)
    pos = y_all == 1
    kind_w, kind_b = fit_kind(x_all[pos], k_all[pos])
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / WEIGHTS).open("wb") as out:
        np.savez_compressed(
            out,
            keep_w=keep_w.astype(np.float32),
            keep_b=np.float32(keep_b),
            kind_w=kind_w.astype(np.float32),
            kind_b=kind_b.astype(np.float32),
        )
    digest = hashlib.sha256(TRAIN.read_bytes() + DEV.read_bytes()).hexdigest()
    meta = {
        "embedder": embedder.model_id,
        "threshold": threshold,
        "kinds": list(KINDS),
        "features": f"{embedder.dim} embedding + {xt.shape[1] - embedder.dim} cues",
        "seed": args.seed,
        "data_sha256": digest,
        "data": {"templated": len(templated), "dev_sentences": 0 if args.no_dev else len(dev)},
        "held_out": {
            "dev_cv": {"folds": args.folds, **scores_at(cv, yd, threshold)},
            "dev_cv_at_0.5": scores_at(cv, yd, 0.5),
            "dev_cv_curve": [
                {k: v for k, v in scores_at(cv, yd, t).items() if k in CURVE_KEYS}
                for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
            ],
            "templates_fifth_at_0.5": templates_held,
        },
        "rules_only": rules_only,
        "trained_by": "python bench/train_capture.py",
    }
    (OUT / META).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", "utf-8")
    json.dump(meta, sys.stdout, indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
