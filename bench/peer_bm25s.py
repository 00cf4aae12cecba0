"""bm25s as a peer of bench/peers.py: the strongest plain lexical baseline we found.

Runs in its own small venv (bm25s and snowballstemmer, no memoracle), reads a job on
stdin as bench/peer_mem0.py does and prints the same JSON. BM25 with Lucene scoring
(k1 1.5, b 0.75), English stop words and the English Snowball stemmer, over the texts
the job gives (speaker, the session's date in words, the turn).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
from typing import Any


def run(job: dict[str, Any]) -> dict[str, Any]:
    import bm25s
    import snowballstemmer

    stem = snowballstemmer.stemmer("english").stemWords
    out = []
    for conv in job["conversations"]:
        t0 = time.perf_counter()
        ids = [turn["id"] for turn in conv["turns"]]
        retriever = bm25s.BM25()
        corpus = [turn["text"] for turn in conv["turns"]]
        retriever.index(
            bm25s.tokenize(corpus, stopwords="en", stemmer=stem, show_progress=False),
            show_progress=False,
        )
        ingest_s = time.perf_counter() - t0
        found: list[list[str]] = []
        search_s: list[float] = []
        for question in conv["questions"]:
            s0 = time.perf_counter()
            tokens = bm25s.tokenize([question], stopwords="en", stemmer=stem, show_progress=False)
            hits: list[str] = []
            if tokens.vocab:
                docs, _ = retriever.retrieve(
                    tokens, k=min(int(job["k"]), len(ids)), show_progress=False
                )
                hits = [ids[int(i)] for i in docs[0]]
            search_s.append(time.perf_counter() - s0)
            found.append(hits)
        out.append({"ingest_s": ingest_s, "search_s": search_s, "found": found})
    return {
        "versions": {d: importlib.metadata.version(d) for d in ("bm25s", "snowballstemmer")},
        "mode": "Lucene BM25, English stop words, Snowball stemmer",
        "conversations": out,
    }


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
