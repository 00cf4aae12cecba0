"""Mem0 OSS as a peer of bench/peers.py; runs inside Mem0's own venv (no memoracle here).

Reads a job (JSON on stdin: conversations of turns {id, text} and questions, `k`, the
embeddings endpoint) and prints one JSON object: package versions, and per conversation
the seconds to ingest, each search's seconds and the turn ids found, best first.

Each turn is one `Memory.add(..., infer=False)`: stored verbatim, no LLM call (the LLM
configured has a dummy key and is never reached). Vectors come from the endpoint the job
names (memoracle's embedder through bench/embed_server.py); the vector store is Qdrant's
local on-disk mode in a temporary folder. Mem0's keyword list (fastembed's Qdrant/bm25)
and entity boost (spaCy's en_core_web_sm) are used only if those are installed with
their models; the report says which ran.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("OPENAI_API_KEY", "sk-dummy-never-used")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(job: dict[str, Any]) -> dict[str, Any]:
    from mem0 import Memory

    k = int(job["k"])
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mem0-peer-") as tmp:
        for n, conv in enumerate(job["conversations"]):
            config = {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": f"locomo_{n}",
                        "path": os.path.join(tmp, f"qdrant-{n}"),
                        "embedding_model_dims": int(job["embedding_dims"]),
                        "on_disk": True,
                    },
                },
                "embedder": {
                    "provider": "openai",
                    "config": {
                        "model": job["embedding_model"],
                        "openai_base_url": job["embedding_base_url"],
                        "api_key": "sk-dummy-loopback",
                    },
                },
                "llm": {"provider": "openai", "config": {"api_key": "sk-dummy-never-called"}},
                "history_db_path": os.path.join(tmp, f"history-{n}.db"),
            }
            memory = Memory.from_config(config)
            user = f"conv{n}"
            by_memory: dict[str, str] = {}
            t0 = time.perf_counter()
            for turn in conv["turns"]:
                added = memory.add(
                    turn["text"], user_id=user, infer=False, metadata={"turn_id": turn["id"]}
                )
                for item in added["results"]:
                    by_memory[str(item["id"])] = turn["id"]
            ingest_s = time.perf_counter() - t0
            found: list[list[str]] = []
            search_s: list[float] = []
            for question in conv["questions"]:
                s0 = time.perf_counter()
                hits = memory.search(question, top_k=k, filters={"user_id": user}, threshold=0.0)
                search_s.append(time.perf_counter() - s0)
                ids = []
                for hit in hits["results"]:
                    turn_id = (hit.get("metadata") or {}).get("turn_id") or by_memory.get(
                        str(hit["id"])
                    )
                    if turn_id and turn_id not in ids:
                        ids.append(turn_id)
                found.append(ids)
            out.append({"ingest_s": ingest_s, "search_s": search_s, "found": found})
            memory.vector_store.client.close()
    keyword = importlib.util.find_spec("fastembed") is not None
    entities = importlib.util.find_spec("spacy") is not None
    return {
        "versions": {d: _version(d) for d in ("mem0ai", "qdrant-client", "fastembed", "spacy")},
        "mode": "vectors"
        + (" + BM25 (fastembed)" if keyword else "")
        + (" + entity boost (spaCy)" if entities else ""),
        "conversations": out,
    }


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
