"""Install into an OpenClaw workspace and uninstall from it.

`install` (in `setup`) backs up what memoracle will touch, imports MEMORY.md and the daily
notes once and writes a manifest (`manifest`); `uninstall` (in `teardown`) exports first,
puts every tracked file back byte for byte, and removes what memoracle added.
"""

from memoracle.openclaw.install.manifest import (
    MANIFEST,
    TRACKED,
    Backup,
    Manifest,
    read_manifest,
    write_manifest,
)
from memoracle.openclaw.install.setup import InstallReport, install
from memoracle.openclaw.install.teardown import FileAction, UninstallReport, uninstall

__all__ = [
    "Backup",
    "FileAction",
    "InstallReport",
    "MANIFEST",
    "Manifest",
    "TRACKED",
    "UninstallReport",
    "install",
    "read_manifest",
    "uninstall",
    "write_manifest",
]
