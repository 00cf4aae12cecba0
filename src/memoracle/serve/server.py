"""The warm server: one open engine behind a unix socket, for hosts that call memoracle on
every turn (the OpenClaw plugin) and should not pay a process start each time.

The protocol is one JSON object per line each way (docs/cli.md, `memoracle serve`):
``{"op": "recall", "message": ..., "budget": ...}`` answers ``{"ok": true, "result":
...}`` or ``{"ok": false, "error": "one line"}``. Calls run one at a time on the engine
(a lock), so two clients never write at once; other processes writing the same store
queue on its writer lock as every `memoracle capture` does.

The socket is created with mode 0600 inside the memoracle home: whoever can connect is
trusted with this memory, which is why only the same account may.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import socketserver
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from memoracle import outbox, reports
from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings
from memoracle.engine import Engine, recall_anyway
from memoracle.engine import memories as engine_memories
from memoracle.engine import search as engine_search
from memoracle.engine.scope import fill_scope
from memoracle.errors import EngineError, InvalidInput, NotFound, StoreError, WorkspaceError
from memoracle.jobs import checkpoint
from memoracle.lifecycle.attributes import reader_for
from memoracle.serialize import records
from memoracle.serve.protocol import SCOPE_FIELDS, scope_of, turns_of
from memoracle.types import Scope

__all__ = ["MAX_LINE", "SOCKET_NAME", "WarmServer", "claim_socket", "socket_path"]

log = logging.getLogger("memoracle.serve")

SOCKET_NAME = "serve.sock"
#: The longest request line read; a turn is capped far below it by the plugin.
MAX_LINE = 8 * 1024 * 1024
#: A unix socket path longer than this does not fit `sockaddr_un` (108 bytes on Linux).
MAX_SOCKET_PATH = 104
OPS = ("ping", "recall", "search", "get", "capture", "checkpoint", "status")
#: The most hits one `search` returns, and the most ids one `get` reads.
MAX_HITS = 100
# What `warm` asks before the server says it is ready: a question with a date, so the
# time words are read too.
WARM_QUESTION = "What did we decide yesterday about where I live?"
#: The fields each op reads besides `op`; any other is refused, so a misspelt scope
#: field (`user` for `user_id`) is an error, not a request in the server's own scope.
FIELDS: dict[str, frozenset[str]] = {
    "ping": frozenset(),
    "recall": frozenset({"message", "budget", *SCOPE_FIELDS}),
    "search": frozenset({"query", "limit", *SCOPE_FIELDS}),
    "get": frozenset({"ids", *SCOPE_FIELDS}),
    "capture": frozenset({"turns", *SCOPE_FIELDS}),
    "checkpoint": frozenset({"text", "session_file", "session", "turns", *SCOPE_FIELDS}),
    "status": frozenset(SCOPE_FIELDS),
}


def _visible(engine: Engine, ref: str, scope: Scope) -> dict[str, Any] | None:
    """The JSON of the memory or turn `ref` names, if `scope` sees it and it was not
    forgotten (a forgotten memory, and the turns it took out of search with it, are no
    answer to a host's memory tools); else None."""
    try:
        if ref.lower().startswith("e_"):
            episode = engine_memories.live_episode(engine, ref, scope=scope)
            return {"id": episode.ref, "episode": records.episode(episode)}
        memory = engine.get(ref, scope=scope)
    except (NotFound, InvalidInput):
        return None
    if memory.status == "forgotten":
        return None
    return {"id": memory.ref, "memory": records.memory(memory)}


def socket_path(settings: Settings, given: Path | None = None) -> Path:
    """The socket the server listens on: `given`, else serve.sock in the home folder."""
    return given if given is not None else settings.home / SOCKET_NAME


def claim_socket(path: Path) -> None:
    """Make `path` free to bind: a socket left behind by a server that died is removed; a
    live server there, or a file that is not a socket, is refused naming it."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise InvalidInput(
            f"socket path {path} is {len(os.fsencode(path))} bytes; unix sockets allow "
            f"{MAX_SOCKET_PATH}: pass a shorter --socket"
        )
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise InvalidInput(f"{path} exists and is not a socket: move it away or pass --socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except OSError:
        log.info("removing the socket a stopped server left behind: %s", path)
        path.unlink(missing_ok=True)
        return
    finally:
        probe.close()
    raise InvalidInput(f"another memoracle serve is answering at {path}; stop it first")


class WarmServer:
    """One engine, opened on first use and kept, and the requests it answers.

    `answer` is the whole protocol minus the socket (tests and other hosts may call it
    directly); `serve` puts it behind a unix socket until SIGTERM, SIGINT, `stop` or
    `idle_exit` seconds without a request."""

    def __init__(
        self,
        settings: Settings,
        *,
        scope: Scope | None = None,
        clock: Clock | None = None,
        idle_exit: float = 0.0,
    ) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        self.scope = scope or Scope()
        self.idle_exit = idle_exit
        self._engine: Engine | None = None
        self._lock = threading.RLock()
        self._last = time.monotonic()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._stopping = threading.Event()

    # -- the engine -----------------------------------------------------------------

    def engine(self) -> Engine:
        with self._lock:
            if self._engine is None:
                # A capture answers at once, and a recall does not embed a burst of
                # turns first: vectors land between requests.
                self._engine = Engine.open(self.settings, clock=self.clock, land_vectors=True)
            return self._engine

    def warm(self) -> None:
        """Open the engine and load what a first recall needs (the embedding model, the
        attribute prototypes' vectors, the token counter, the vectors in memory, the
        rules a question reads), so the first request after the server says it is ready
        does not pay for them: a recall previewed without its boost, which changes
        nothing stored. A store or model that fails now fails the first request
        instead, which says why, as before."""
        with contextlib.suppress(EngineError), self._call() as engine:
            embedder = engine.searcher.embedder
            if embedder is not None:
                embedder.embed_query("memoracle")
                reader_for(embedder)
            engine_search.recall(engine, WARM_QUESTION, scope=self.scope, boost=False)

    def close(self) -> None:
        with self._lock:
            engine, self._engine = self._engine, None
            if engine is not None:
                with contextlib.suppress(EngineError):
                    engine.close()

    @contextlib.contextmanager
    def _call(self) -> Iterator[Engine]:
        """The engine for one request; a store error closes it so the next request opens
        the database again (it may have been restored or re-created meanwhile)."""
        with self._lock:
            try:
                yield self.engine()
            except (StoreError, WorkspaceError):
                self.close()
                raise

    # -- the protocol ---------------------------------------------------------------

    def answer(self, line: bytes | str) -> dict[str, Any]:
        """The reply to one request line; never raises for what a client sent."""
        self._last = time.monotonic()
        try:
            request = json.loads(line)
        except (ValueError, RecursionError) as exc:
            return {"ok": False, "error": f"request: not valid JSON ({exc})"}
        if not isinstance(request, dict):
            return {"ok": False, "error": "request: expected a JSON object with an 'op'"}
        op = request.get("op")
        handler: Callable[[dict[str, Any]], dict[str, Any]] | None = {
            "ping": self._ping,
            "recall": self._recall,
            "search": self._search,
            "get": self._get,
            "capture": self._capture,
            "checkpoint": self._checkpoint,
            "status": self._status,
        }.get(op if isinstance(op, str) else "")
        if handler is None:
            return {"ok": False, "error": f"request: field 'op' must be one of {', '.join(OPS)}"}
        fields = FIELDS[str(op)]
        unknown = set(request) - fields - {"op"}
        if unknown:
            known = ", ".join(sorted(fields)) or "none"
            return {
                "ok": False,
                "error": f"request: unknown field(s) {', '.join(sorted(unknown))} for {op}; "
                f"known: {known}",
            }
        try:
            return {"ok": True, "result": handler(request)}
        except EngineError as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # a bug must not take the server down for every client
            log.exception("op %s failed", op)
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def _scope(self, request: dict[str, Any]) -> Scope:
        return scope_of(request, self.scope, "request")

    def _ping(self, _request: dict[str, Any]) -> dict[str, Any]:
        return records.envelope(
            pid=os.getpid(), home=str(self.settings.home), files_dir=str(self.settings.files_dir)
        )

    def _recall(self, request: dict[str, Any]) -> dict[str, Any]:
        message = request.get("message")
        if not isinstance(message, str) or not message.strip():
            raise InvalidInput("request: field 'message' must be a non-empty string")
        budget = request.get("budget")
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < 1
        ):
            raise InvalidInput("request: field 'budget' must be a positive integer")
        scope = self._scope(request)
        try:
            with self._call() as engine:
                block = engine.recall(message, budget=budget, scope=scope)
        except (StoreError, WorkspaceError):
            # A missing or damaged store: MEMORY.md and the notes still answer.
            block = recall_anyway(
                self.settings, message, budget=budget, scope=scope, clock=self.clock
            )
        return records.recall_block(block)

    def _search(self, request: dict[str, Any]) -> dict[str, Any]:
        """The hits `search --json` gives, in the request's scope (the OpenClaw gateway's
        own `memory_search` tool asks through this)."""
        query = request.get("query")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("request: field 'query' must be a non-empty string")
        limit = request.get("limit")
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_HITS
        ):
            raise InvalidInput(f"request: field 'limit' must be an integer from 1 to {MAX_HITS}")
        scope = self._scope(request)
        with self._call() as engine:
            outcome = engine.search(query, k=limit, scope=scope)
        return records.envelope(
            mode=outcome.mode,
            note=outcome.note,
            no_match=outcome.no_match,
            hits=[records.hit(h) for h in outcome.hits],
        )

    def _get(self, request: dict[str, Any]) -> dict[str, Any]:
        """The memories (m_…) and turns (e_…) of `ids` the request's scope sees, in the
        order asked; an id it does not see is left out, exactly as one that does not
        exist (docs/scopes.md): a host filters hits by asking which are still visible."""
        ids = request.get("ids")
        if (
            not isinstance(ids, list)
            or not 1 <= len(ids) <= MAX_HITS
            or not all(isinstance(i, str) and i.strip() for i in ids)
        ):
            raise InvalidInput(
                f"request: field 'ids' must be a list of 1 to {MAX_HITS} ids (m_12, e_7)"
            )
        scope = self._scope(request)
        found: list[dict[str, Any]] = []
        with self._call() as engine:
            for ref in ids:
                item = _visible(engine, ref.strip(), scope)
                if item is not None:
                    found.append(item)
        return records.envelope(items=found)

    def _capture(self, request: dict[str, Any]) -> dict[str, Any]:
        if "turns" not in request:
            raise InvalidInput("request: field 'turns' is missing (one turn or a list)")
        batches = turns_of(request["turns"], self._scope(request), "request field 'turns'")
        try:
            with self._call() as engine:
                results = engine.capture_many(batches)
        except StoreError as exc:  # the store cannot take it now: queued (docs/outage.md)
            filled = [(turns, fill_scope(self.settings, scope)) for turns, scope in batches]
            entry = outbox.capture_entry(filled, now=self.clock.now(), door="serve")
            try:
                outbox.append(self.settings.home, entry)
            except WorkspaceError:
                raise exc from None
            log.warning("capture queued as %s: %s", entry.id, exc)
            queued = [reports.queued_capture(entry.id, len(turns)) for turns, _ in batches]
            return records.envelope(results=queued)
        return records.envelope(results=[records.capture_result(r) for r in results])

    def _checkpoint(self, request: dict[str, Any]) -> dict[str, Any]:
        text, file, session = (request.get(k) for k in ("text", "session_file", "session"))
        for name, value in (("text", text), ("session_file", file), ("session", session)):
            if value is not None and not isinstance(value, str):
                raise InvalidInput(f"request: field '{name}' must be a string")
        if text is None and file is None and "turns" not in request:
            raise InvalidInput("request: checkpoint needs 'text', 'session_file' and/or 'turns'")
        scope = self._scope(request)
        batches = None
        if "turns" in request:
            batches = turns_of(request["turns"], scope, "request field 'turns'")
        done = []
        with self._lock:
            if batches is not None:
                done.append(
                    checkpoint.save_turns(
                        self.settings, batches, engine=self.engine, clock=self.clock, scope=scope
                    )
                )
            if file is not None:
                done.append(
                    checkpoint.save_session(
                        self.settings, Path(file), engine=self.engine, clock=self.clock, scope=scope
                    )
                )
            if text is not None:
                done.append(
                    checkpoint.save(
                        self.settings,
                        text,
                        engine=self.engine,
                        clock=self.clock,
                        scope=scope,
                        session=session,
                    )
                )
            if any(r.store_failed for r in done):
                self.close()
        return records.envelope(checkpoints=[reports.checkpoint_report(r) for r in done])

    def _status(self, request: dict[str, Any]) -> dict[str, Any]:
        scope = self._scope(request)
        with self._call() as engine:
            stats = engine.stats(scope=scope)
            index = engine.index_status()
            filled = fill_scope(self.settings, replace(scope, chat=scope.chat or None))
            lander = engine.searcher.lander
            background = (
                None
                if lander is None
                else {"busy": lander.busy, "landed": lander.landed, "error": lander.error}
            )
        return records.envelope(
            pid=os.getpid(),
            **records.status(filled, stats, index),
            vectors_in_background=background,
        )

    # -- the socket -----------------------------------------------------------------

    def serve(self, path: Path, *, on_ready: Callable[[], None] | None = None) -> None:
        """Listen at `path` (mode 0600) until stopped; the socket file is removed on the
        way out. SIGTERM and SIGINT stop it cleanly when called from the main thread. The
        engine is opened and warmed (`warm`) before the socket is there."""
        self.warm()
        claim_socket(path)
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                while not owner._stopping.is_set():
                    line = self.rfile.readline(MAX_LINE + 1)
                    if not line:
                        return
                    if len(line) > MAX_LINE:
                        reply = {"ok": False, "error": f"request: longer than {MAX_LINE} bytes"}
                    else:
                        reply = owner.answer(line)
                    data = json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n"
                    try:
                        self.wfile.write(data)
                        self.wfile.flush()
                    except OSError:
                        return
                    if len(line) > MAX_LINE:
                        return

        old = os.umask(0o177)
        try:
            server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        finally:
            os.umask(old)
        server.daemon_threads = True
        os.chmod(path, 0o600)
        self._server = server
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: self.stop())
        if self.idle_exit > 0:
            threading.Thread(target=self._watch_idle, daemon=True).start()
        log.info("memoracle serve: listening at %s (pid %d)", path, os.getpid())
        if on_ready is not None:
            on_ready()
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            server.server_close()
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            with self._lock:  # the request in flight finishes first
                self.close()
            log.info("memoracle serve: stopped")

    def stop(self) -> None:
        """Stop serving (from any thread or a signal handler)."""
        self._stopping.set()
        server = self._server
        if server is not None:
            # shutdown() waits for the loop: never from the loop's own thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

    def _watch_idle(self) -> None:
        while not self._stopping.wait(1.0):
            if time.monotonic() - self._last >= self.idle_exit:
                log.info("memoracle serve: idle for %.0f s, exiting", self.idle_exit)
                self.stop()
                return
