"""The command line: parse, make one engine call, format. Nothing else.

`main` (the `memoracle` group) is in `main`; what every command shares (global options,
opening an engine, errors as one-line messages and exit codes, `--json` output) in
`context`; the commands in one module per area, each registered on `main` when imported
here. `--json` outputs are the shapes in `serialize` (docs/json.md).
"""

from memoracle.cli import (  # noqa: F401  (importing registers the commands)
    capture,
    graph,
    jobs,
    lifecycle,
    memories,
    openclaw,
    schedule,
    search,
    serve,
    setup,
    transfer,
)
from memoracle.cli.main import main

__all__ = ["main"]
