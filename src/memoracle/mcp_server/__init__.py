"""The MCP door: memoracle's tools for any MCP client, over stdio or streamable HTTP.

Owns the seven tools (`memory_recall`, `memory_search`, `memory_get`,
`memory_remember`, `memory_forget`, `memory_checkpoint`, `memory_status`): their
argument schemas and the descriptions a model reads, the answer each gives (a short text
for the model plus the stable JSON shapes of docs/json.md as structured content), the
server's fixed scope, and running the server. The work is the engine's (and
`checkpoint`'s, `health`'s); the protocol is the `mcp` SDK's.

Scope is the server's, never the caller's: who the memory belongs to (agent, user, chat,
visibility) is set when the server is built, every tool reads and writes inside it, a
memory outside it is "not found", and an argument the schema does not name (`user`,
`scope`, …) is refused. One engine is held per server and tool calls use it one at a
time (the SDK runs each call on a worker thread).

    from memoracle import Scope
    from memoracle.mcp_server import run
    run("~/agent-memory", transport="stdio", scope=Scope(user="alice"))

The parts: `tools` (the seven tools over one engine and scope), `server` (the SDK
server over stdio or loopback HTTP).
"""

from memoracle.mcp_server.server import DEFAULT_PORT, HTTP_PATH, build_server, run
from memoracle.mcp_server.tools import SERVER_NAME, Kind, MemoryTools

__all__ = [
    "DEFAULT_PORT",
    "HTTP_PATH",
    "Kind",
    "MemoryTools",
    "SERVER_NAME",
    "build_server",
    "run",
]
