"""The test server's lifetime is bounded: stopped, or its test process killed, no
PostgreSQL process started from the harness's folder outlives it (pgharness.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer, alive, left_running

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)
HERE = Path(__file__).parent


def test_the_server_listens_on_loopback_tcp_with_passwords(pg_server: PgServer) -> None:
    with psycopg.connect(pg_server.url()) as conn:
        row = conn.execute("SELECT inet_server_addr()::text, inet_server_port()").fetchone()
    assert row == ("127.0.0.1/32", pg_server.port)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(pg_server.url(password="not-the-password"))


def test_stop_leaves_no_process_and_no_folder() -> None:
    server = PgServer.start()
    conn = psycopg.connect(server.url(), autocommit=True)  # a backend of its own, too
    conn.execute("SELECT 1")
    assert left_running(server.folder, grace_s=0)  # the check sees a live server
    server.stop()
    conn.close()
    assert left_running(server.folder) == []
    assert not server.folder.exists()


@pytest.mark.slow
def test_a_killed_test_process_takes_its_server_with_it() -> None:
    """The watchdog ends the server of a test process killed with SIGKILL (no teardown
    runs), backends included, and removes its folder."""
    child = subprocess.Popen(
        [sys.executable, str(HERE / "pgharness.py"), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    assert child.stdout is not None
    folder_text, postmaster = child.stdout.readline().split()
    folder = Path(folder_text)
    assert left_running(folder, grace_s=0)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    assert left_running(folder, grace_s=10) == []
    assert not alive(int(postmaster))
