"""Train the pair model (`memoracle.lifecycle.pairs`) and write its weights.

    python bench/train_pairs.py [--seed 7] [--no-dispute] [--no-rules] [--no-write]

Data (`bench/pairs_data.py`): the pairs written by independent writers
(`bench/data/pairs/writer-N.jsonl`) and the pairs of the dev lifecycle sets; never the
blind sets. Each pair is also used with its texts the other way round when its label
says so (same, coexist), and unrelated statements are paired at random as `coexist` (at
run time most memories a new statement is compared with have nothing to do with it).

Features: the default embedder's vectors (USE) of both texts, [u, v, |u − v|, u ⊙ v],
their cosine and `pairs.cues`, standardised. Model: softmax regression with L2 (numpy,
full-batch Adam steps, classes weighted to balance, seeded): the same data and seed give
the same weights.

Held out, leave one writer out: for each writer, a model trained on the other writers
and the dev pairs labels that writer's pairs (per label and language), beside what the
rules say about the same pairs, each run through a fresh store (`pairs_data.rules_say`:
capture the old statement, then the new; was the old memory superseded or disputed,
confirmed or merged, or left?), and beside the two together as the engine runs them
(the rules first; where they left the pair, the model in its bands). The bands
(supersede, dispute, confirm) are chosen on those held-out probabilities: the lowest
probability at which a change is right at least `--precision` of the time (a dispute
`--dispute`, a confirm `--confirm`; `--no-dispute`: none disputed). `--no-rules`
skips the store runs (fast); `--no-write` prints without writing the weights.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from pairs_data import Pair, dev_pairs, rules_engine, rules_say, writer_pairs

from memoracle.embed.local import UseEmbedder
from memoracle.lifecycle.pairs import LABELS, META, WEIGHTS, features

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "memoracle" / "data"
CHANGE = ("update", "negate")
RANDOM_SHARE = 0.5  # random unrelated pairs added, as a share of the pairs trained on
MISMATCHED = 2  # memories of other pairs each change is also said against (`mismatched`)


def featurise(pairs: list[Pair], vectors: dict[str, np.ndarray]) -> np.ndarray:
    return np.vstack([features(vectors[p.old], vectors[p.new], p.old, p.new) for p in pairs])


def augmented(pairs: list[Pair], rng: np.random.Generator) -> list[Pair]:
    """`pairs`, those whose label holds both ways turned round too, and random pairs of
    statements from different pairs as `coexist`."""
    out = list(pairs)
    out += [
        Pair(f"{p.id}~", p.source, p.lang, p.new, p.old, p.label)
        for p in pairs
        if p.label in ("same", "coexist")
    ]
    texts = [t for p in pairs for t in (p.old, p.new)]
    owner = {t: p.id for p in pairs for t in (p.old, p.new)}
    for n in range(int(RANDOM_SHARE * len(pairs))):
        i, j = rng.choice(len(texts), size=2, replace=False)
        if owner[texts[i]] != owner[texts[j]]:
            out.append(Pair(f"random-{n}", "random", "-", texts[i], texts[j], "coexist"))
    return out + mismatched(pairs, rng, MISMATCHED)


def mismatched(pairs: list[Pair], rng: np.random.Generator, per: int) -> list[Pair]:
    """Each change (update, negate) said against `per` memories of other pairs, as
    `coexist`: words of change alone ("I quit", "we moved") change nothing they are not
    about, and at run time a statement meets many memories it is not about."""
    out = []
    for p in pairs:
        if p.label not in CHANGE:
            continue
        for j in rng.choice(len(pairs), size=per, replace=False):
            other = pairs[int(j)]
            if other.id != p.id and other.old != p.old:
                out.append(Pair(f"{p.id}-x{j}", "mismatched", p.lang, other.old, p.new, "coexist"))
    return out


def fit(x: np.ndarray, y: np.ndarray, *, l2: float, seed: int) -> dict[str, np.ndarray]:
    """Softmax regression over standardised features: (mean, scale, w, b)."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-3
    z = (x - mean) / scale
    n, d = z.shape
    k = len(LABELS)
    counts = np.bincount(y, minlength=k).astype(float)
    weight = (n / (k * np.maximum(counts, 1)))[y]
    onehot = np.eye(k)[y]
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.01, (d, k))
    b = np.zeros(k)
    m = [np.zeros_like(w), np.zeros_like(b)]
    v = [np.zeros_like(w), np.zeros_like(b)]
    for step in range(1, 301):
        logits = z @ w + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * weight[:, None] / weight.sum()
        grads = [z.T @ g + l2 * w, g.sum(axis=0)]
        for i, (param, grad) in enumerate(zip((w, b), grads, strict=True)):
            m[i] = 0.9 * m[i] + 0.1 * grad
            v[i] = 0.999 * v[i] + 0.001 * grad**2
            param -= 0.01 * (m[i] / (1 - 0.9**step)) / (np.sqrt(v[i] / (1 - 0.999**step)) + 1e-8)
    return {"mean": mean, "scale": scale, "w": w, "b": b}


def predict(model: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    logits = ((x - model["mean"]) / model["scale"]) @ model["w"] + model["b"]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


def train(pairs: list[Pair], vectors: dict[str, np.ndarray], args: argparse.Namespace) -> Any:
    rng = np.random.default_rng(args.seed)
    rows = augmented(pairs, rng)
    y = np.array([LABELS.index(p.label) for p in rows])
    return fit(featurise(rows, vectors), y, l2=args.l2, seed=args.seed)


def banded(p: np.ndarray, bands: dict[str, float]) -> str:
    """What the engine does with probabilities `p`: change (supersede), dispute, same
    (confirm) or nothing ("coexist")."""
    change = p[LABELS.index("update")] + p[LABELS.index("negate")]
    if change >= bands["supersede"]:
        return "change"
    if change >= bands["dispute"]:
        return "dispute"
    if LABELS[int(np.argmax(p))] == "same" and p.max() >= bands["confirm"]:
        return "same"
    return "coexist"


def choose_band(probs: np.ndarray, gold: list[str], labels: tuple[str, ...], floor: float) -> float:
    """The lowest probability of `labels` together (update and negate: a change; same)
    at which saying one of them is right at least `floor` of the time, over the pairs at
    or above it (at least ten of them)."""
    score = probs[:, [LABELS.index(label) for label in labels]].sum(axis=1)
    right = np.array([g in labels for g in gold])
    for t in np.arange(0.4, 0.99, 0.01):
        kept = score >= t
        if kept.sum() >= 10 and right[kept].mean() >= floor:
            return round(float(t), 2)
    return 0.99


def coarse(label: str) -> str:
    return "change" if label in CHANGE else label


def table(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Per `key` (the gold label, or the language): pairs, the model's argmax right, and
    (coarse: update and negate as one change) the model in its bands, the rules, and
    the rules then the model."""
    out: dict[str, dict[str, Any]] = {}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
        groups["all"].append(r)
    for name, group in sorted(groups.items()):
        n = len(group)
        line: dict[str, Any] = {
            "pairs": n,
            "model": round(sum(r["model"] == r["gold"] for r in group) / n, 3),
            "model_banded": round(sum(r["banded"] == coarse(r["gold"]) for r in group) / n, 3),
        }
        if "rules" in group[0]:
            line["rules"] = round(sum(r["rules"] == coarse(r["gold"]) for r in group) / n, 3)
            line["rules_then_model"] = round(
                sum(r["both"] == coarse(r["gold"]) for r in group) / n, 3
            )
            line["no_memory"] = sum(r["rules_raw"] == "none" for r in group)
        out[name] = line
    return out


def precision_of(rows: list[dict[str, Any]], field: str, said: str) -> dict[str, Any]:
    """Of the pairs `field` says `said` of, how many are that (coarse)."""
    kept = [r for r in rows if r.get(field) == said]
    right = sum(coarse(r["gold"]) == said for r in kept)
    return {"said": len(kept), "right": right, "precision": round(right / max(len(kept), 1), 3)}


def held_out(
    writers: dict[str, list[Pair]], dev: list[Pair], vectors: dict[str, np.ndarray], args: Any
) -> tuple[list[dict[str, Any]], dict[str, float], dict[str, Any]]:
    """Leave one writer out: every writer's pair labelled by a model that never saw that
    writer; the bands chosen on those probabilities."""
    probs: list[np.ndarray] = []
    unrelated: list[np.ndarray] = []  # the held-out writer's changes against other memories
    held: list[Pair] = []
    for name, pairs in writers.items():
        trained_on = [p for other, ps in writers.items() if other != name for p in ps] + dev
        model = train(trained_on, vectors, args)
        probs.append(predict(model, featurise(pairs, vectors)))
        held += pairs
        others = mismatched(pairs, np.random.default_rng(args.seed), 3)
        unrelated.append(predict(model, featurise(others, vectors)))
    p = np.vstack(probs)
    gold = [h.label for h in held]
    alarms = np.vstack(unrelated)
    bands = {
        "supersede": choose_band(p, gold, CHANGE, args.precision),
        "confirm": choose_band(p, gold, ("same",), args.confirm),
    }
    bands["dispute"] = min(bands["supersede"], choose_band(p, gold, CHANGE, args.dispute))
    if args.no_dispute:  # a change is superseded or left, never disputed
        bands["dispute"] = bands["supersede"]
    rows = [
        {
            "id": h.id, "writer": h.source, "lang": h.lang, "gold": h.label,
            "model": LABELS[int(np.argmax(row))], "banded": banded(row, bands),
        }
        for h, row in zip(held, p, strict=True)
    ]  # fmt: skip
    said = [banded(row, bands) for row in alarms]
    false_alarms = {
        "pairs": len(said),
        "superseded": round(said.count("change") / len(said), 3),
        "disputed": round(said.count("dispute") / len(said), 3),
    }
    return rows, bands, false_alarms


def add_rules(rows: list[dict[str, Any]], pairs: list[Pair]) -> None:
    """Each row's pair through a fresh store without the pair model (`rules_say`), and
    what the rules then the model would make of it."""
    with rules_engine(pair_model=False) as (engine, clock):
        for row, pair in zip(rows, pairs, strict=True):
            said = rules_say(engine, clock, pair)
            row["rules_raw"] = said
            row["rules"] = "coexist" if said == "none" else said
            left = said in ("coexist",)
            row["both"] = row["banded"] if left else row["rules"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--l2", type=float, default=0.5)
    parser.add_argument("--precision", type=float, default=0.9, help="of a supersede or confirm")
    parser.add_argument("--dispute", type=float, default=0.85, help="of a dispute")
    parser.add_argument("--confirm", type=float, default=0.8, help="of a confirm")
    parser.add_argument("--no-dispute", action="store_true", help="no dispute band")
    parser.add_argument("--no-rules", action="store_true", help="skip the rules' store runs")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    writers = writer_pairs()
    if len(writers) < 2:
        raise SystemExit(f"need at least two writers' pairs in {ROOT / 'bench/data/pairs'}")
    dev = dev_pairs()
    everything = [p for ps in writers.values() for p in ps] + dev
    embedder = UseEmbedder()
    texts = sorted({t for p in everything for t in (p.old, p.new)})
    vectors = dict(zip(texts, np.asarray(embedder.embed_documents(texts)), strict=True))
    rows, bands, false_alarms = held_out(writers, dev, vectors, args)
    if not args.no_rules:
        add_rules(rows, [p for ps in writers.values() for p in ps])
    report = {
        "by_label": table(rows, "gold"),
        "by_language": table(rows, "lang"),
        "by_writer": table(rows, "writer"),
        "change_precision": {
            "model_banded": precision_of(rows, "banded", "change"),
            **({"rules": precision_of(rows, "rules", "change")} if not args.no_rules else {}),
            **(
                {"rules_then_model": precision_of(rows, "both", "change")}
                if not args.no_rules
                else {}
            ),
        },
        "confusion": dict(Counter(f"{r['gold']}->{r['model']}" for r in rows)),
        "unrelated": false_alarms,
    }
    model = train(everything, vectors, args)
    digest = hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted((ROOT / "bench/data/pairs").glob("*.jsonl")))
        + b"".join(p.read_bytes() for p in sorted((ROOT / "bench/data").glob("lifecycle-dev*")))
    ).hexdigest()
    meta = {
        "name": "pair-model-1",
        "embedder": embedder.model_id,
        "labels": list(LABELS),
        "bands": bands,
        "features": f"4 x {embedder.dim} (u, v, |u-v|, u*v) + cosine + cues",
        "seed": args.seed,
        "l2": args.l2,
        "data_sha256": digest,
        "data": {
            **{name: len(ps) for name, ps in writers.items()},
            "dev": len(dev),
            "labels": dict(Counter(p.label for p in everything)),
        },
        "held_out": {"leave_one_writer_out": report},
        "trained_by": "python bench/train_pairs.py",
    }
    if not args.no_write:
        OUT.mkdir(parents=True, exist_ok=True)
        with (OUT / WEIGHTS).open("wb") as out:
            np.savez_compressed(out, **{k: v.astype(np.float32) for k, v in model.items()})
        (OUT / META).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", "utf-8")
    json.dump(meta, sys.stdout, indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
