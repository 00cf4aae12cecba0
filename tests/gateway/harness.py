"""The real OpenClaw gateway, driven the way a person would: its own CLI, in a state
folder of its own (OPENCLAW_STATE_DIR and HOME under the test's temporary folder, so
nothing touches the real ~/.openclaw), against the fake model in fake_model.py.

Every process started here has a timeout and is stopped by `stop()`, which the session's
finalizer calls even when a test fails.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from toolchain import Toolchain

GATEWAY_LIFETIME = 1800.0  # seconds: a gateway left running is killed after this (a loaded
# machine runs the suite in over 20 minutes, the timed turns last)
GATEWAY_START = 120.0
TOKEN = "memoracle-e2e-token"  # noqa: S105 - loopback only, a throwaway state dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def memoracle_shim(bin_dir: Path) -> Path:
    """A `memoracle` on the gateway's PATH that runs this checkout's memoracle."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "memoracle"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memoracle.cli "$@"\n')
    shim.chmod(0o755)
    return shim


def first_json(text: str) -> Any:
    """The JSON document in a CLI's stdout (OpenClaw may print log lines before it)."""
    for n, ch in enumerate(text):
        if ch in "{[":
            try:
                return json.JSONDecoder().raw_decode(text[n:])[0]
            except json.JSONDecodeError:
                continue
    raise AssertionError(f"no JSON in output: {text[-2000:]!r}")


class OpenClaw:
    """One OpenClaw installation: its CLI, its state folder and at most one gateway."""

    def __init__(self, chain: Toolchain, root: Path, memoracle_bin: Path) -> None:
        self.chain = chain
        self.root = root
        self.state = root / "state"
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        src = Path(__import__("memoracle").__file__).resolve().parents[1]
        path = os.pathsep.join([str(memoracle_bin.parent), str(chain.bin_dir), os.environ["PATH"]])
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
        self.env = dict(
            env,
            HOME=str(self.home),
            OPENCLAW_STATE_DIR=str(self.state),
            OPENCLAW_GATEWAY_TOKEN=TOKEN,
            PATH=path,
            PYTHONPATH=os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")])),
            NO_COLOR="1",
        )
        self.gateway: subprocess.Popen[bytes] | None = None
        self.log = root / "gateway.log"
        self._killer: threading.Timer | None = None

    @property
    def config_path(self) -> Path:
        return self.state / "openclaw.json"

    @property
    def workspace(self) -> Path:
        return self.state / "workspace"

    def run(
        self, *args: str, timeout: float = 180, check: bool = True, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*self.chain.openclaw_argv(), *args],
            env=self.env,
            cwd=self.root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"openclaw {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def memoracle(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "memoracle.cli", *args],
            env=self.env,
            cwd=self.root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"memoracle {' '.join(args)}: {done.stdout}\n{done.stderr}")
        return done

    def config(self) -> dict[str, Any]:
        data = json.loads(self.config_path.read_text())
        assert isinstance(data, dict)
        return data

    def write_config(self, data: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(data, indent=2) + "\n")

    def set_config(self, key: str, value: Any) -> None:
        """`openclaw config set KEY VALUE --strict-json`: the gateway's own validation."""
        self.run("config", "set", key, json.dumps(value), "--strict-json")

    def start(self) -> None:
        """Start `openclaw gateway run` and wait until it accepts connections."""
        assert self.gateway is None, "a gateway is already running"
        offset = self.log.stat().st_size if self.log.exists() else 0
        log = self.log.open("ab")
        self.gateway = subprocess.Popen(
            [
                *self.chain.openclaw_argv(),
                "gateway",
                "run",
                "--port",
                str(self.port),
                "--auth",
                "token",
            ],
            env=self.env,
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._killer = threading.Timer(GATEWAY_LIFETIME, self._kill)
        self._killer.daemon = True
        self._killer.start()
        deadline = time.monotonic() + GATEWAY_START
        while time.monotonic() < deadline:
            if self.gateway.poll() is not None:
                raise AssertionError(f"gateway exited {self.gateway.returncode}:\n{self.tail()}")
            if b"[gateway] ready" in self.log.read_bytes()[offset:]:
                return
            time.sleep(0.3)
        raise AssertionError(f"gateway not ready in {GATEWAY_START:.0f} s:\n{self.tail()}")

    def stop(self) -> None:
        if self._killer is not None:
            self._killer.cancel()
            self._killer = None
        if self.gateway is None:
            return
        if self.gateway.poll() is None:
            self.gateway.terminate()
            try:
                self.gateway.wait(30)
            except subprocess.TimeoutExpired:
                self._kill()
                self.gateway.wait(10)
        self.gateway = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def _kill(self) -> None:
        if self.gateway is not None and self.gateway.poll() is None:
            os.killpg(self.gateway.pid, 9)

    def tail(self, lines: int = 60) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def turn(self, message: str, *, session_key: str | None = None) -> dict[str, Any]:
        """One `openclaw agent --agent main --message … --json` through the gateway."""
        args = ["agent", "--agent", "main", "--message", message, "--json", "--timeout", "120"]
        if session_key:
            args += ["--session-key", session_key]
        done = self.run(*args, timeout=180)
        reply = first_json(done.stdout)
        assert isinstance(reply, dict)
        return reply


def stop_servers(home: Path, wait: float = 30.0) -> list[int]:
    """Stop the `memoracle serve` processes the plugin started for `home`: it starts
    them detached, with an idle exit of an hour, so the gateway's end does not end them
    (by design: the next gateway finds the warm server). SIGTERM stops one cleanly."""
    marker = f"--home\0{home}\0serve\0".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    for pid in pids:
        try:
            os.kill(pid, 15)
        except ProcessLookupError:  # it ended between the scan and now
            continue
    deadline = time.monotonic() + wait
    while any(Path(f"/proc/{pid}").exists() for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids
