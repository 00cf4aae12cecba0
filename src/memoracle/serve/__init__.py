"""The warm door: `memoracle serve`, one open engine behind a unix socket (server), and
the checks of what a client sends, shared with `memoracle capture` (protocol)."""
