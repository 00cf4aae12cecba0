"""basic-memory as a peer of bench/peers.py; runs inside its own venv (Python >= 3.12).

Reads a job (JSON on stdin, as bench/peer_mem0.py does) and prints one JSON object:
package versions, the search mode, and per conversation the seconds to ingest, each
search's seconds and the turn ids found, best first.

Each conversation gets a fresh basic-memory home and config folder (one child process
per conversation, so nothing is shared). Each turn is one note written through
basic-memory's own `write_note` tool, titled by its turn id; ingest ends when the
pending file writes and background work (vector sync) have drained, i.e. when the first
question can be asked. Questions go through its `search_notes` tool in hybrid mode
(its SQLite FTS5 plus sqlite-vec vectors), with vectors from the job's embeddings
endpoint (memoracle's embedder through bench/embed_server.py, its "openai" provider)
and the similarity floor off, as every system is asked for its top k.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SEARCH_TYPE = "hybrid"
# "files": notes written as Markdown files, then basic-memory's own bulk index (`bm
# reindex`: FTS rows, then embeddings in batches) -- the path for notes other tools
# write. "tool": one `write_note` call per turn, as an agent writes (about 2 turns/s
# here, so ten conversations take most of an hour). BASIC_MEMORY_PEER_INGEST picks.
INGEST = os.environ.get("BASIC_MEMORY_PEER_INGEST", "files")


def _title(turn_id: str) -> str:
    return "turn " + turn_id.replace(":", "-")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _env(job: dict[str, Any], tmp: str) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": tmp,
        "BASIC_MEMORY_HOME": os.path.join(tmp, "notes"),
        "BASIC_MEMORY_CONFIG_DIR": os.path.join(tmp, "config"),
        "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "true",
        "BASIC_MEMORY_SEMANTIC_EMBEDDING_PROVIDER": "openai",
        "BASIC_MEMORY_SEMANTIC_EMBEDDING_MODEL": str(job["embedding_model"]),
        "BASIC_MEMORY_SEMANTIC_EMBEDDING_API_BASE": str(job["embedding_base_url"]),
        "BASIC_MEMORY_SEMANTIC_EMBEDDING_API_KEY": "sk-dummy-loopback",
        "BASIC_MEMORY_SEMANTIC_EMBEDDING_DIMENSIONS": str(job["embedding_dims"]),
        "BASIC_MEMORY_SEMANTIC_MIN_SIMILARITY": "0.0",
        "BASIC_MEMORY_DEFAULT_SEARCH_TYPE": SEARCH_TYPE,
        "BASIC_MEMORY_NO_PROMOS": "1",
        "BASIC_MEMORY_LOG_LEVEL": "WARNING",
        "LOGURU_LEVEL": "WARNING",
        "DO_NOT_TRACK": "1",
        "HF_HUB_OFFLINE": "1",
    }


async def _one(conv: dict[str, Any], k: int) -> dict[str, Any]:
    """Ingest one conversation and ask its questions, in this (fresh) process."""
    from basic_memory import db
    from basic_memory.index.local_schedulers import drain_background_tasks
    from basic_memory.index.note_content_materialization import drain_pending_materializations
    from basic_memory.mcp.tools import search_notes, write_note

    by_title: dict[str, str] = {}
    t0 = time.perf_counter()
    if INGEST == "tool":
        for turn in conv["turns"]:
            title = _title(turn["id"])
            by_title[title] = turn["id"]
            await write_note(
                title=title, content=turn["text"], directory="locomo", output_format="json"
            )
        await drain_pending_materializations()
        await drain_background_tasks()
    else:
        from basic_memory.cli.commands.db import _reindex
        from basic_memory.config import ConfigManager

        folder = Path(os.environ["BASIC_MEMORY_HOME"]) / "locomo"
        folder.mkdir(parents=True, exist_ok=True)
        for turn in conv["turns"]:
            title = _title(turn["id"])
            by_title[title] = turn["id"]
            (folder / f"{title}.md").write_text(
                f"---\ntitle: {title}\ntype: note\n---\n\n{turn['text']}\n", encoding="utf-8"
            )
        with contextlib.redirect_stdout(sys.stderr):  # its progress bar, not our JSON
            await _reindex(
                ConfigManager().config, search=True, embeddings=True, full=False, project=None
            )
    ingest_s = time.perf_counter() - t0
    found: list[list[str]] = []
    search_s: list[float] = []
    for question in conv["questions"]:
        s0 = time.perf_counter()
        result = await search_notes(
            query=question, search_type=SEARCH_TYPE, page_size=k, output_format="json"
        )
        search_s.append(time.perf_counter() - s0)
        if isinstance(result, str):
            raise RuntimeError(f"search_notes answered with text: {result[:300]}")
        ids: list[str] = []
        for hit in result.get("results", []):
            turn_id = by_title.get(str(hit.get("title", "")))
            if turn_id and turn_id not in ids:
                ids.append(turn_id)
        found.append(ids)
    await db.shutdown_db()
    return {"ingest_s": ingest_s, "search_s": search_s, "found": found}


def run(job: dict[str, Any]) -> dict[str, Any]:
    out = []
    for conv in job["conversations"]:
        one = {**job, "conversations": [conv]}
        with tempfile.TemporaryDirectory(prefix="basic-memory-peer-") as tmp:
            done = subprocess.run(
                [sys.executable, __file__, "--one"],
                input=json.dumps(one),
                capture_output=True,
                text=True,
                env=_env(job, tmp),
                check=False,
            )
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            raise SystemExit(f"conversation {conv.get('sample_id')}: exit {done.returncode}")
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "versions": {d: _version(d) for d in ("basic-memory", "sqlite-vec", "fastembed")},
        "mode": f"{SEARCH_TYPE}: FTS5 + sqlite-vec; ingest by {INGEST}",
        "conversations": out,
    }


def _sqlite_with_extensions() -> str:
    """basic-memory loads sqlite-vec as an SQLite extension; a CPython built without
    extension loading (pyenv's default) gets pysqlite3-binary's module in its place."""
    import sqlite3

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        return "sqlite3"
    import pysqlite3  # type: ignore[import-not-found]

    sys.modules["sqlite3"] = pysqlite3
    sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2
    return "pysqlite3"


if __name__ == "__main__":
    job = json.load(sys.stdin)
    if sys.argv[1:] == ["--one"]:
        _sqlite_with_extensions()
        answer = asyncio.run(_one(job["conversations"][0], int(job["k"])))
        sys.stdout.write("\n" + json.dumps(answer) + "\n")
    else:
        json.dump(run(job), sys.stdout)
