"""A real PostgreSQL server for the tests, from the `pgserver` wheel's own binaries.

`PgServer.start()` runs `initdb` in a fresh folder under the system temp dir, then the
`postgres` binary of the wheel's `pginstall`, listening on 127.0.0.1 on a free port
(TCP with SCRAM passwords, so a wrong password is refused as on a real deployment) and
on a unix socket in the same folder. Its lifetime is bounded three ways:

- `stop()` (the session fixture's teardown) shuts it down fast and removes the folder;
- a watchdog process (`python pgharness.py --watch PARENT POSTMASTER FOLDER DEADLINE`),
  started beside it, kills the postmaster (SIGQUIT, then SIGKILL) and removes the
  folder when the test process dies (killed, crashed) or the deadline passes;
- every server process runs with its working directory inside the folder, which is how
  `left_running(folder)` finds one that outlived it (tests/pg/test_pg_harness.py).

As root (containers, CI), PostgreSQL refuses to run; the server then runs as the system
user `pgserver` (created by pgserver's own helper when missing), which owns the folder.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# What the PostgreSQL tests need; without any of them they skip, saying this.
MISSING = [m for m in ("psycopg", "pgvector", "pgserver") if importlib.util.find_spec(m) is None]
SKIP_REASON = f"{', '.join(MISSING)} not installed: pip install -e '.[dev]' (brings them)"
SUPERUSER = "postgres"
LIFETIME_S = 3600  # the watchdog's bound on one server, whatever happens to the tests
START_TIMEOUT_S = 60
# A throwaway server: no durability work, few connections, little memory.
SETTINGS = (
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
    "max_connections=60",
    "shared_buffers=32MB",
)


def pginstall() -> Path:
    """The folder of the pgserver wheel's PostgreSQL (bin/, lib/, share/), found without
    importing the package (its import starts nothing, but asks platformdirs for a
    runtime dir, which warns where none is set)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pgserver is not installed: pip install pgserver")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _system_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam("pgserver")
    except KeyError:  # as pgserver itself does (pgserver.utils.ensure_user_exists)
        subprocess.run(["useradd", "-s", "/bin/bash", "pgserver"], check=True, capture_output=True)
    return "pgserver"


@dataclass
class PgServer:
    folder: Path
    port: int
    password: str
    process: subprocess.Popen[bytes]
    watchdog: subprocess.Popen[bytes]

    @property
    def socket_dir(self) -> Path:
        return self.folder / "sock"

    def url(self, database: str = "postgres", *, user: str = SUPERUSER, password: str = "") -> str:
        secret = password or (self.password if user == SUPERUSER else "")
        auth = f"{user}:{secret}@" if secret else f"{user}@"
        return f"postgresql://{auth}127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls, *, install: Path | None = None) -> PgServer:
        """initdb and start a server from `install` (the wheel's pginstall by default).
        Whatever fails on the way, nothing is left running and the folder is removed."""
        install = install or pginstall()
        folder = Path(tempfile.mkdtemp(prefix="memoracle-pg-"))
        try:
            return cls._start(install, folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise

    @classmethod
    def _start(cls, install: Path, folder: Path) -> PgServer:
        user = _system_user()
        data, sock = folder / "data", folder / "sock"
        sock.mkdir()
        password = secrets.token_hex(12)
        pwfile = folder / "pw"
        pwfile.write_text(password)
        pwfile.chmod(0o600)
        if user is not None:
            for path in (folder, sock, pwfile):
                shutil.chown(path, user, user)
        _run(
            [str(install / "bin" / "initdb"), "-D", str(data), "-U", SUPERUSER]
            + ["--pwfile", str(pwfile), "--auth-local=trust", "--auth-host=scram-sha-256"]
            + ["-E", "UTF8", "--locale=C", "--no-sync"],
            user,
            folder,
        )
        pwfile.unlink()
        for _ in range(3):  # a port taken between the probe and the bind: another one
            port = _free_port()
            log = open(folder / "server.log", "ab")  # noqa: SIM115 - closed below
            try:
                process = subprocess.Popen(
                    [str(install / "bin" / "postgres"), "-D", str(data), "-p", str(port)]
                    + ["-k", str(sock), "-c", "listen_addresses=127.0.0.1"]
                    + [f"-c{setting}" for setting in SETTINGS],
                    cwd=folder,
                    user=user,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,
                )
            finally:
                log.close()  # the server writes to its own copy
            server = cls(folder, port, password, process, _watch(process.pid, folder))
            if server._wait_ready():
                return server
            server._end()
        raise RuntimeError(f"PostgreSQL did not start; see {folder / 'server.log'}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    pass
                if (self.folder / "data" / "postmaster.pid").exists():
                    ready = subprocess.run(
                        [str(pginstall() / "bin" / "pg_isready"), "-h", "127.0.0.1"]
                        + ["-p", str(self.port), "-U", SUPERUSER],
                        capture_output=True,
                    )
                    if ready.returncode == 0:
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Fast shutdown (SIGINT: every session ended, no checkpoint wait), SIGKILL if it
        lingers; the watchdog is ended and the folder removed."""
        self._end()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _end(self) -> None:
        _end(self.process.pid)
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        if self.watchdog.poll() is None:
            self.watchdog.kill()
            self.watchdog.wait()


def _run(command: list[str], user: str | None, cwd: Path) -> None:
    done = subprocess.run(command, user=user, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr.strip()[-2000:]}")


def _watch(postmaster: int, folder: Path) -> subprocess.Popen[bytes]:
    deadline = time.time() + LIFETIME_S
    return subprocess.Popen(
        [sys.executable, __file__, "--watch", str(os.getpid()), str(postmaster), str(folder)]
        + [str(deadline)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a signal to the test's process group does not end it
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not running
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _end(postmaster: int) -> None:
    """Stop the postmaster: SIGINT (fast shutdown), then SIGQUIT, then SIGKILL."""
    for sig, wait in ((signal.SIGINT, 3.0), (signal.SIGQUIT, 2.0), (signal.SIGKILL, 0.0)):
        try:
            os.kill(postmaster, sig)
        except ProcessLookupError:
            return
        until = time.monotonic() + wait
        while time.monotonic() < until and alive(postmaster):
            time.sleep(0.02)
        if not alive(postmaster):
            return


def left_running(folder: Path, *, grace_s: float = 5.0) -> list[str]:
    """The processes still running inside `folder` (their working directory is in it,
    as every PostgreSQL process's is: the postmaster and each backend), after up to
    `grace_s` seconds for them to go."""
    left: list[str] = []
    until = time.monotonic() + grace_s
    while True:
        left = []
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                cwd = os.readlink(proc / "cwd")
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if (cwd == str(folder) or cwd.startswith(f"{folder}/")) and alive(int(proc.name)):
                left.append(f"{proc.name}: {line.strip()}")
        if not left or time.monotonic() > until:
            return left
        time.sleep(0.1)


def _watchdog(parent: int, postmaster: int, folder: Path, deadline: float) -> None:
    while alive(postmaster):
        if not alive(parent) or time.time() > deadline:
            _end(postmaster)
            break
        time.sleep(0.2)
    # Backends leave once they see the postmaster gone; then the folder can go.
    left_running(folder, grace_s=5.0)
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--watch"]:
        parent_pid, postmaster_pid, where, until = sys.argv[2:6]
        _watchdog(int(parent_pid), int(postmaster_pid), Path(where), float(until))
    elif sys.argv[1:2] == ["--serve"]:  # started by a test that then kills this process
        running = PgServer.start()
        sys.stdout.write(f"{running.folder} {running.process.pid}\n")
        sys.stdout.flush()
        time.sleep(LIFETIME_S)
