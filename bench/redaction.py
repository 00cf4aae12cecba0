"""How well redaction does on the generated corpus (tests/redaction_corpus.py).

Reports the planted secrets that survive `redact` (any of a secret's needles left in the
output), by shape, and the benign sentences it altered (any change at all), with the
time per text. `--engine` also pushes every secret through a fresh store's doors
(capture, remember, checkpoint, import) and scans every file under its home for them.

    python bench/redaction.py [--per-shape 5] [--benign 560] [--show 10] [--engine]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from memoracle.capture.redact import redact  # noqa: E402
from redaction_corpus import benign, leaks, secrets, shapes  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-shape", type=int, default=5)
    parser.add_argument("--benign", type=int, default=560)
    parser.add_argument("--show", type=int, default=10, help="examples of each failure to print")
    args = parser.parse_args()

    planted = secrets(args.per_shape)
    sentences = benign(args.benign)
    started = time.perf_counter()
    leaked = [(p, redact(p.text).text) for p in planted]
    leaked = [(p, out) for p, out in leaked if leaks(out, p.needles)]
    altered = [(s, redact(s).text) for s in sentences]
    altered = [(s, out) for s, out in altered if out != s]
    elapsed = time.perf_counter() - started
    per_text = elapsed / (len(planted) + len(sentences)) * 1e6

    print(f"shapes: {len(shapes())}, planted secrets: {len(planted)}, benign: {len(sentences)}")
    print(f"secrets left in the output: {len(leaked)} of {len(planted)}")
    by_shape = Counter(p.shape for p, _ in leaked)
    for shape, n in sorted(by_shape.items()):
        print(f"  {shape}: {n} of {args.per_shape}")
    for p, out in leaked[: args.show]:
        print(f"  LEAK {p.shape}: {out!r}")
    share = len(altered) / len(sentences) * 100
    print(f"benign sentences altered: {len(altered)} of {len(sentences)} ({share:.1f}%)")
    for s, out in altered[: args.show]:
        print(f"  ALTERED {s!r} -> {out!r}")
    print(f"time: {per_text:.1f} µs a text")


if __name__ == "__main__":
    main()
