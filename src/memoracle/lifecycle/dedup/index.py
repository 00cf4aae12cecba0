"""Finding duplicates among many memories: `DedupIndex` (words, entities and vectors of
the live memories; for each new one only candidates that could pass the threshold are
scored, bounded from above first), `find_duplicates` and `query`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.lifecycle.dedup.model import (
    _KEYED_KINDS,
    _LIFTING,
    CONFLICT_FLOOR,
    ENTITY_KINDS,
    ENTITY_LIFT,
    SMOOTHING,
    THRESHOLD,
    VECTOR_HIGH,
    VECTOR_LOW,
    W_JACCARD,
    W_SEGMENTS,
    DedupScore,
    DuplicateGroup,
    Vector,
)
from memoracle.lifecycle.dedup.profile import (
    _keyed_agreement,
    _Profile,
    _profile,
    _score,
    _vector_weight,
)


def _lexical_floor(threshold: float, lift: bool) -> float:
    """The lowest lexical score that can still end at `threshold`: with every entity
    agreeing (`lift`), score = lexical + 0.2·(1 − lexical); without entities, lexical."""
    if not lift:
        return threshold
    return max(0.0, (threshold - ENTITY_LIFT) / (1 - ENTITY_LIFT))


_LIFTING_BITS = sum(1 << n for n, kind in enumerate(ENTITY_KINDS) if kind in _LIFTING)


def _bits(entities: Mapping[str, object]) -> int:
    return sum(1 << n for n, kind in enumerate(ENTITY_KINDS) if kind in entities)


def _needed(floor: float, size: int) -> int:
    """Fewest shared words s with which a text of `size` words (the smaller of a pair)
    can reach lexical `floor`: jaccard <= s / (2·size − s) and the formula is <= s·(0.45
    / size + 0.55 / (size + ½)); lexical is the larger of the two."""
    by_jaccard = 2 * floor * size / (1 + floor)
    by_formula = floor / (W_JACCARD / size + W_SEGMENTS / (size + SMOOTHING))
    return max(1, math.ceil(min(by_jaccard, by_formula) - 1e-9))


def _upper_bound(a: _Profile, b: _Profile, vector_similarity: float | None) -> float:
    """A cheap score no lower than `_score(a, b, ...)`: segments <= containment."""
    if a.exact == b.exact:
        return 1.0
    shared = len(a.tokens & b.tokens)
    if not shared:
        bound = 0.0
    else:
        union = len(a.tokens) + len(b.tokens) - shared
        smaller = min(len(a.tokens), len(b.tokens))
        jaccard = shared / union
        bound = max(jaccard, W_JACCARD * jaccard + W_SEGMENTS * shared / (smaller + SMOOTHING))
    if vector_similarity is not None:
        bound = max(bound, (bound + _vector_weight(vector_similarity)) / 2)
    if not _LIFTING.isdisjoint(a.entities.keys() & b.entities.keys()):
        bound += ENTITY_LIFT * (1 - bound)
    # E is the least agreement over kinds; kinds compared pair by pair may all agree.
    agreement = min((_keyed_agreement(k, a, b) for k in a.keys.keys() & b.keys.keys()), default=1.0)
    bound *= CONFLICT_FLOOR + (1 - CONFLICT_FLOOR) * agreement
    if a.negated != b.negated:
        bound *= CONFLICT_FLOOR
    return bound


_VECTORISE = 16  # partners from which the bound is cheaper in numpy than pair by pair


_VECTOR_NEIGHBOURS = 20  # nearest vectors per memory considered as candidates


_VECTOR_BLOCK = 512  # rows per matrix product: 512 x 10,000 float32 is 20 MB


class DedupIndex:
    """Memories prepared once for many comparisons (`query`, `find_duplicates`).

    `items` are (id, text); `vectors`, optional, map ids to unit vectors of one model
    (ids without one are compared on words only). Preparing costs about 0.3 ms per
    memory (dates, entities, content words), so `--query-batch` builds one index, and a
    check at capture time is cheaper on a few candidates (say, FTS hits) than on all.
    Memories with the same normalised text are prepared and compared once. Measured on
    a busy two-core machine: 10,000 short memories take 3-4 s of CPU to prepare and 1-3 s
    to group.
    """

    def __init__(
        self, items: Sequence[tuple[int, str]], *, vectors: Mapping[int, Vector] | None = None
    ) -> None:
        by_text: dict[str, list[int]] = defaultdict(list)
        for memory_id, text in items:
            by_text[text].append(memory_id)
        members: dict[str, list[int]] = defaultdict(list)
        profiles: dict[str, _Profile] = {}
        for text, ids in by_text.items():
            profile = _profile(text)
            profiles.setdefault(profile.exact, profile)
            members[profile.exact].extend(ids)
        # One entry per normalised text: its profile, the ids that have it, a vector.
        self._profiles = list(profiles.values())
        self._members = [members[p.exact] for p in self._profiles]
        self._vectors: list[Vector | None] = [
            next((vectors[i] for i in ids if i in vectors), None) if vectors else None
            for ids in self._members
        ]
        self._entry = {p.exact: n for n, p in enumerate(self._profiles)}
        self._sizes = [len(p.tokens) for p in self._profiles]
        postings: dict[str, list[int]] = defaultdict(list)
        for entry, profile in enumerate(self._profiles):
            for token in profile.tokens:
                postings[token].append(entry)
        self._postings = dict(postings)
        # The same postings as one sorted int64 array of word·stride + size·n + entry, so
        # the texts of one word within a range of sizes are one slice (see `_word_edges`).
        span = max(1, len(self._profiles))
        self._stride = (max(self._sizes, default=0) + 1) * span
        self._word_ids = {token: n for n, token in enumerate(self._postings)}
        ordered = [list(p.tokens) for p in self._profiles]
        self._words = [
            np.fromiter((self._word_ids[t] for t in words), dtype=np.int64, count=len(words))
            for words in ordered
        ]
        # For the bound in numpy: which of an entry's words stand for its values of each
        # exact kind ("number:16", a name's stem), how many values of each kind every
        # entry has, which kinds it has (bits), whether it is negated, its vector.
        self._kind_words = [
            {
                kind: np.fromiter((w in keys for w in words), dtype=bool, count=len(words))
                for kind, keys in p.keys.items()
            }
            for p, words in zip(self._profiles, ordered, strict=True)
        ]
        self._kind_counts = {
            kind: np.array([len(p.keys.get(kind, ())) for p in self._profiles])
            for kind in _KEYED_KINDS
        }
        # Every entry's name words, end to end (entry n's are [starts[n], starts[n + 1])).
        names = [[self._word_ids[w] for w in p.keys.get("name", ())] for p in self._profiles]
        self._name_starts = np.cumsum([0] + [len(ids) for ids in names])
        self._name_words = np.fromiter(
            (i for ids in names for i in ids), dtype=np.int64, count=int(self._name_starts[-1])
        )
        self._kind_bits = np.array([_bits(p.entities) for p in self._profiles], dtype=np.int64)
        self._negated = np.array([p.negated for p in self._profiles], dtype=bool)
        self._size_array = np.array(self._sizes, dtype=np.float64)
        dim = next((len(v) for v in self._vectors if v is not None), 0)
        self._vector_rows = np.zeros((len(self._profiles), dim), dtype=np.float32)
        for n, v in enumerate(self._vectors):
            if v is not None:
                self._vector_rows[n] = v
        # The entries that have a vector, and those vectors as rows.
        self._with_vectors = [n for n, v in enumerate(self._vectors) if v is not None]
        self._matrix = self._vector_rows[self._with_vectors]
        self._keys = np.sort(
            np.fromiter(
                (
                    self._word_ids[token] * self._stride + self._sizes[e] * span + e
                    for token, entries in self._postings.items()
                    for e in entries
                ),
                dtype=np.int64,
            )
        )

    def __len__(self) -> int:
        return sum(len(ids) for ids in self._members)

    def _cosine(self, a: int, b: int) -> float | None:
        va, vb = self._vectors[a], self._vectors[b]
        if va is None or vb is None:
            return None
        return float(np.dot(va, vb))

    def query(
        self, text: str, *, vector: Vector | None = None, limit: int = 5
    ) -> list[tuple[int, DedupScore]]:
        """The `limit` memories closest to `text`, best first, duplicates or not.

        Compared: every memory sharing a content word (or an entity) with `text` or its
        normalised text, and, given `vector`, the memories whose vectors are nearest.
        The first result decides `memoracle dedup --query` (`is_duplicate`); [] means
        nothing is even close.
        """
        if limit <= 0:
            return []
        profile = _profile(text)
        candidates: set[int] = set()
        if profile.exact in self._entry:
            candidates.add(self._entry[profile.exact])
        for token in profile.tokens:
            candidates.update(self._postings.get(token, ()))
        cosines: dict[int, float] = {}
        with_vectors = self._with_vectors
        if vector is not None and with_vectors:
            sims = self._matrix @ np.asarray(vector, dtype=np.float32)
            for k in np.argsort(-sims)[:_VECTOR_NEIGHBOURS]:
                candidates.add(with_vectors[int(k)])
            cosines = {n: float(s) for n, s in zip(with_vectors, sims, strict=True)}
        # Best bounds first; stop once no bound can beat the `limit`-th score found.
        bounded = sorted(
            ((_upper_bound(profile, self._profiles[n], cosines.get(n)), n) for n in candidates),
            key=lambda pair: (-pair[0], pair[1]),
        )
        scored: list[tuple[int, DedupScore]] = []
        for bound, n in bounded:
            if len(scored) >= limit and bound < scored[limit - 1][1].score:
                break
            score = _score(profile, self._profiles[n], cosines.get(n))
            scored.extend((memory_id, score) for memory_id in self._members[n])
            scored.sort(key=lambda pair: (-pair[1].score, pair[0]))
        return scored[:limit]

    def _word_edges(self, threshold: float) -> dict[tuple[int, int], DedupScore]:
        """Entry pairs at or above `threshold` on words. Lossless, and no pair of texts
        without enough words in common is ever looked at in Python.

        A pair reaches `threshold` only if its lexical score reaches L (`_lexical_floor`:
        lower when identifiers may lift it), so the smaller text x (|x| <= |y|) shares
        at least `_needed` words with y, and jaccard <= |x|/|y| caps y's size. For each
        x, numpy gathers the postings of x's words restricted to texts after x in
        (size, entry) order and within that cap (one slice per word of the sorted
        `_keys`) and counts the words each text shares with x (ScanCount). Only texts
        sharing enough go on, to a cheap bound (`_upper_bound`) and then `_score`.
        """
        span = max(1, len(self._profiles))
        keys, stride = self._keys, self._stride
        edges: dict[tuple[int, int], DedupScore] = {}
        for x, profile in enumerate(self._profiles):
            size = self._sizes[x]
            if not size:
                continue
            floor = _lexical_floor(threshold, lift=not _LIFTING.isdisjoint(profile.entities))
            need = _needed(floor, size)
            # jaccard <= |x|/|y|, so lexical <= max(|x|/|y|, 0.45·|x|/|y| + 0.55·|x|/(|x|
            # + ½)) bounds the partner's size.
            rest = floor - W_SEGMENTS * size / (size + SMOOTHING)
            largest = max(size / floor, W_JACCARD * size / rest) if rest > 0 else math.inf
            words = self._words[x]
            biggest = stride // span - 1
            limit = biggest if largest >= biggest else int(largest)
            low = words * stride + (size * span + x + 1)
            high = words * stride + (limit + 1) * span
            starts = np.searchsorted(keys, low)
            lengths = np.searchsorted(keys, high) - starts
            total = int(lengths.sum())
            if total < need:
                continue
            # Concatenated ranges [start, start + length) of every word, in one array.
            offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
            partners = keys[offsets + np.arange(total)] % span
            shared = np.bincount(partners)
            ys = np.flatnonzero(shared >= need)
            bounded = len(ys) > _VECTORISE
            if bounded:
                ys = self._bounded(x, ys, shared, partners, lengths, threshold)
            for y in ys.tolist():
                other = self._profiles[y]
                cosine = self._cosine(x, y)
                if not bounded and _upper_bound(profile, other, cosine) < threshold:
                    continue
                score = _score(profile, other, cosine)
                if score.score >= threshold:
                    edges[(x, y) if x < y else (y, x)] = score
        return edges

    def _bounded(
        self,
        x: int,
        ys: npt.NDArray[np.intp],
        shared: npt.NDArray[np.intp],
        partners: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.intp],
        threshold: float,
    ) -> npt.NDArray[np.intp]:
        """The `ys` whose `_upper_bound` against x reaches `threshold`, all at once.

        `shared[y]` is how many words y shares with x; `partners`, the texts met word by
        word (`lengths` per word of x), give the values of each keyed kind of x that y
        shares. Each kind can only lower the bound, so ys are dropped as soon as it fails.
        """
        size = self._sizes[x]
        common = shared[ys]
        jaccard = common / (size + self._size_array[ys] - common)
        bound = np.maximum(jaccard, W_JACCARD * jaccard + W_SEGMENTS * common / (size + SMOOTHING))
        if self._vector_rows.shape[1] and self._vectors[x] is not None:
            cosine = self._vector_rows[ys] @ self._vector_rows[x]
            weight = np.clip((cosine - VECTOR_LOW) / (VECTOR_HIGH - VECTOR_LOW), 0.0, 1.0)
            bound = np.maximum(bound, (bound + weight) / 2)  # no vector: weight 0
        lifted = (self._kind_bits[ys] & self._kind_bits[x] & _LIFTING_BITS) != 0
        bound = np.where(lifted, bound + ENTITY_LIFT * (1 - bound), bound)
        bound = np.where(self._negated[ys] != self._negated[x], bound * CONFLICT_FLOOR, bound)
        keep = bound >= threshold - 1e-9
        ys, bound = ys[keep], bound[keep]
        # Names last: their way back (y's names among x's words) costs the most.
        kinds = sorted(self._kind_words[x].items(), key=lambda item: item[0] == "name")
        agreement = np.ones(len(ys))
        for kind, mask in kinds:
            if not len(ys):
                break
            theirs = self._kind_counts[kind][ys]
            found = np.bincount(partners[np.repeat(mask, lengths)], minlength=len(shared))[ys]
            # Values of x found in y; of y found in x: the same count but for names.
            back = self._names_found(x, ys) if kind == "name" else found
            share = np.maximum(found / self._kind_counts[kind][x], back / np.maximum(1, theirs))
            agreement = np.minimum(agreement, np.where(theirs > 0, share, 1))
            keep = bound * (CONFLICT_FLOOR + (1 - CONFLICT_FLOOR) * agreement) >= threshold - 1e-9
            ys, bound, agreement = ys[keep], bound[keep], agreement[keep]
        return ys

    def _names_found(self, x: int, ys: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """How many of each y's name words are among x's words."""
        starts = self._name_starts[ys]
        lengths = self._name_starts[ys + 1] - starts
        total = int(lengths.sum())
        if not total:
            return np.zeros(len(ys), dtype=np.intp)
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        found = np.isin(self._name_words[offsets + np.arange(total)], self._words[x])
        owner = np.repeat(np.arange(len(ys)), lengths)
        return np.bincount(owner[found], minlength=len(ys))

    def _vector_edges(
        self, threshold: float, known: Mapping[tuple[int, int], DedupScore]
    ) -> dict[tuple[int, int], DedupScore]:
        """Entry pairs at or above `threshold` among each vector's nearest neighbours
        (blocked matrix products: O(n²), but in numpy, ~0.1 s for 10,000 vectors)."""
        entries, matrix = self._with_vectors, self._matrix
        if len(entries) < 2:
            return {}
        # (lexical + v') / 2 must reach the lexical floor with lexical >= 0.
        weight = max(0.0, 2 * _lexical_floor(threshold, lift=True) - 1)
        minimum = VECTOR_LOW + weight * (VECTOR_HIGH - VECTOR_LOW)
        k = min(_VECTOR_NEIGHBOURS, len(entries) - 1)
        edges: dict[tuple[int, int], DedupScore] = {}
        for start in range(0, len(entries), _VECTOR_BLOCK):
            sims = matrix[start : start + _VECTOR_BLOCK] @ matrix.T
            for row in range(sims.shape[0]):
                sims[row, start + row] = -np.inf
            nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            for row, cols in enumerate(nearest):
                for col in cols:
                    if sims[row, col] < minimum:
                        continue
                    a, b = entries[start + row], entries[int(col)]
                    pair = (a, b) if a < b else (b, a)
                    if pair in known or pair in edges:
                        continue
                    score = _score(self._profiles[a], self._profiles[b], float(sims[row, col]))
                    if score.score >= threshold:
                        edges[pair] = score
        return edges

    def find_duplicates(
        self, *, threshold: float = THRESHOLD, rank: Callable[[int], Any] | None = None
    ) -> list[DuplicateGroup]:
        """Groups of near-duplicates, each to merge into its keeper (see the module
        docstring: not transitive, no id twice). `rank` orders ids for keeper, smallest
        first (e.g. ``lambda i: (not pinned[i], created[i])``); by default the id itself,
        so the oldest memory is kept. Groups come in keeper order.

        `threshold` is in (0, 1]. Every pair at or above it that shares a word is found;
        pairs that share none are found only through vectors, among each memory's
        `_VECTOR_NEIGHBOURS` nearest."""
        edges = self._word_edges(threshold)
        edges.update(self._vector_edges(threshold, edges))
        neighbours: dict[int, list[tuple[int, DedupScore]]] = defaultdict(list)
        for (a, b), score in edges.items():
            neighbours[a].append((b, score))
            neighbours[b].append((a, score))

        def key(memory_id: int) -> Any:
            return (rank(memory_id), memory_id) if rank else memory_id

        # An entry (one normalised text) ranks as its best-ranked id.
        best = {n: min(ids, key=key) for n, ids in enumerate(self._members)}
        same = DedupScore(1.0, 1.0, 1.0, 1.0, None, None, (), "same text")
        taken: set[int] = set()
        groups: list[DuplicateGroup] = []
        for n in sorted(range(len(self._members)), key=lambda e: key(best[e])):
            if n in taken:
                continue
            absorbed = [(m, s) for m, s in neighbours.get(n, ()) if m not in taken]
            if len(self._members[n]) == 1 and not absorbed:
                continue
            taken.add(n)
            taken.update(m for m, _ in absorbed)
            keep = best[n]
            merge = [(i, same) for i in self._members[n] if i != keep]
            merge += [(i, s) for m, s in absorbed for i in self._members[m]]
            merge.sort(key=lambda pair: (-pair[1].score, key(pair[0])))
            groups.append(DuplicateGroup(keep, tuple(merge)))
        return groups


def find_duplicates(
    items: Sequence[tuple[int, str]],
    *,
    vectors: Mapping[int, Vector] | None = None,
    threshold: float = THRESHOLD,
    rank: Callable[[int], Any] | None = None,
) -> list[DuplicateGroup]:
    """Near-duplicate groups among `items` (id, text); see `DedupIndex.find_duplicates`."""
    return DedupIndex(items, vectors=vectors).find_duplicates(threshold=threshold, rank=rank)


def query(
    text: str,
    items: Sequence[tuple[int, str]],
    *,
    vector: Vector | None = None,
    vectors: Mapping[int, Vector] | None = None,
    limit: int = 5,
) -> list[tuple[int, DedupScore]]:
    """The memories of `items` closest to `text`, best first; see `DedupIndex.query`."""
    return DedupIndex(items, vectors=vectors).query(text, vector=vector, limit=limit)
