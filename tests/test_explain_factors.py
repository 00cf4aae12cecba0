"""`explain` accounts for every factor of a hit's final score: the product of the
factors it shows is the score it shows, whatever the store (random stores of two
speakers over several sessions, with memories, named speakers, neighbour turns and
times the query names)."""

from __future__ import annotations

import math
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

START = datetime(2023, 5, 1, 10, 0, tzinfo=UTC)
PEOPLE = ("Caroline", "Melanie")
WORDS = (
    "painting pottery camping hiking guitar adoption counseling school beach mountains "
    "sunset library museum festival garden kids dog bakery marathon violin"
).split()
SAID = (
    "I went {0} with my family last weekend, the {1} was lovely.",
    "I live in Paris now and I love the {0} there.",
    "We decided to use {0} for the {1} project.",
    "My favourite thing is {0}, especially near the {1}.",
    "Thanks! How was the {0}?",
    "I started {0} classes in May and the {1} helps a lot.",
)
FINAL = re.compile(r"^final (?P<final>\S+) = fused (?P<fused>\S+) × (?P<rest>.*)$")
NUMBER = re.compile(r" (\d[\d.e+-]*)(?: ×|$)")


def _store(tmp_path: Path, seed: int) -> Engine:
    rng = random.Random(seed)
    settings = load(tmp_path / f"home-{seed}", env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(START)
    Engine.init(settings, clock=clock)
    engine = Engine.open(settings, clock=clock)
    for session in range(1, 4 + rng.randrange(3)):
        at = START + timedelta(days=9 * session)
        clock.set(at)
        turns = [
            Turn(
                "user",
                rng.choice(SAID).format(*rng.sample(WORDS, 2)),
                at + timedelta(minutes=i),
                f"s{session}",
                f"D{session}:{i}",
                speaker=PEOPLE[i % 2],
            )
            for i in range(1, 8 + rng.randrange(6))
        ]
        engine.capture(turns)
    clock.set(START + timedelta(days=60))
    return engine


def _queries(rng: random.Random) -> list[str]:
    return [
        f"What did {rng.choice(PEOPLE)} say about {rng.choice(WORDS)}?",
        f"when did {rng.choice(PEOPLE)} go {rng.choice(WORDS)}",
        f"{rng.choice(WORDS)} in May",
        f"{rng.choice(WORDS)} {rng.choice(WORDS)} project",
    ]


def test_the_factors_explain_shows_multiply_to_the_final_score(tmp_path: Path) -> None:
    seen: set[str] = set()
    for seed in range(4):
        _check_store(tmp_path, seed, seen)
    # the stores exercise the factors that were once missing from the breakdown
    assert {"session", "speaker", "neighbours", "boost", "via"} <= seen


def _check_store(tmp_path: Path, seed: int, seen: set[str]) -> None:
    engine = _store(tmp_path, seed)
    rng = random.Random(1000 + seed)
    with engine:
        for query in _queries(rng):
            hits = engine.search(query, k=15).hits
            for hit in hits:
                sc = hit.scores
                assert sc.fused is not None
                context = (sc.fused + sc.neighbours) * sc.session * sc.speaker
                assert math.isclose(sc.rrf, context, rel_tol=1e-9)
                product = sc.rrf * sc.recency * sc.activation * sc.boost
                assert math.isclose(sc.final, product, rel_tol=1e-9)
                seen.update(
                    name
                    for name, on in (
                        ("session", sc.session != 1.0),
                        ("speaker", sc.speaker != 1.0),
                        ("neighbours", sc.neighbours > 0),
                        ("boost", sc.boost != 1.0),
                        ("via", sc.via is not None),
                    )
                    if on
                )
            for hit in hits[:5]:
                found = engine.explain(hit.ref, query=query)
                assert found.rank is not None
                (line,) = [r for r in found.reasons if r.startswith("final ")]
                m = FINAL.match(line)
                assert m is not None, line
                factors = [float(x) for x in NUMBER.findall(m["rest"])]
                assert len(factors) == 5  # session, speaker, recency, activation, time boost
                shown = float(m["fused"]) * math.prod(factors)
                assert math.isclose(shown, float(m["final"]), rel_tol=1e-4), line
                assert math.isclose(float(m["final"]), hit.scores.final, rel_tol=1e-5)


def test_the_fused_score_is_the_sum_of_the_parts_explain_names(tmp_path: Path) -> None:
    engine = _store(tmp_path, 7)
    k = engine.settings.search.rrf_k
    with engine:
        hits = engine.search("What did Caroline say about painting?", k=10).hits
        assert hits
        for hit in hits:
            found = engine.explain(hit.ref, query="What did Caroline say about painting?")
            (line,) = [r for r in found.reasons if r.startswith("fused ")]
            total, _, parts = line.removeprefix("fused ").partition(" = ")
            value = 0.0
            for part in parts.split(" + "):
                fraction = re.search(r"([\d.]+)/\((\d+)\+(\d+)\)", part)
                if fraction:
                    weight, kk, rank = fraction.groups()
                    assert int(kk) == k
                    value += float(weight) / (int(kk) + int(rank))
                elif part != "0":
                    value += float(part.rsplit(" ", 1)[1])
            assert math.isclose(value, float(total), rel_tol=1e-4), line
