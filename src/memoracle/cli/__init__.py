"""The command line: parse, make one engine call, format. Nothing else.

`main` (the `memoracle` group) is in `main`; what every command shares (global options,
opening an engine, errors as one-line messages and exit codes, `--json` output) in
`context`; the commands in one module per area, each registered on `main` when its
module is imported, which `main` does for the command asked for (`main.COMMANDS`).
`--json` outputs are the shapes in `serialize` and `reports` (docs/json.md).
"""

from memoracle.cli.main import main

__all__ = ["main"]
