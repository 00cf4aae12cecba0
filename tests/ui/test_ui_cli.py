"""`memoracle ui` from the command line: loopback by default, another address only when
named and then with a warning, an address it cannot listen on a clear error before any
URL is printed, and a real start answering 401 without the token and the page with it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main

TEST_NET = "192.0.2.1"  # documentation's address (RFC 5737): never this machine's


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    result = CliRunner().invoke(main, ["--home", str(home), "init"])
    assert result.exit_code == 0, result.output
    return home


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_another_address_warns_and_one_it_cannot_take_is_a_clear_error(home: Path) -> None:
    port = _free_port()
    args = ["--home", str(home), "ui", "--host", TEST_NET, "--port", str(port)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"warning: listening on {TEST_NET}" in result.stderr
    assert f"error: cannot listen on {TEST_NET}:{port}" in result.stderr
    assert "token=" not in result.output  # no URL for a page that is not there


def test_a_port_in_use_is_a_clear_error_and_loopback_has_no_warning(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["--home", str(home), "ui", "--port", str(port)])
    assert result.exit_code == 2, result.output
    assert f"error: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "warning" not in result.stderr and "token=" not in result.output
    bad = CliRunner().invoke(main, ["--home", str(home), "ui", "--port", "70000"])
    assert bad.exit_code == 2 and "--port: 70000 is not a port" in bad.output


def _get(url: str, cookie: str = "") -> tuple[int, str]:
    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(Stay)
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("set-cookie", "")


@pytest.mark.slow
def test_a_real_start_needs_the_printed_token(home: Path) -> None:
    CliRunner().invoke(main, ["--home", str(home), "remember", "My sister Anna lives in Lyon."])
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    command = [sys.executable, "-m", "memoracle.cli", "--home", str(home), "ui"]
    with subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.PIPE, env=env, text=True
    ) as process:
        try:
            _check_the_page(process, port)
        finally:
            process.terminate()
            process.wait(timeout=30)


def _check_the_page(process: subprocess.Popen[str], port: int) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.match(rf"memoracle ui: (http://127\.0\.0\.1:{port}/memories)\?token=(\S+)", line)
    assert found, line
    base, token = found.groups()
    deadline = time.monotonic() + 60
    while True:
        try:
            status, _ = _get(base)
            break
        except OSError:
            assert time.monotonic() < deadline, "the page did not start"
            time.sleep(0.2)
    assert status == 401
    status, cookie = _get(f"{base}?token={token}")
    assert status == 303 and "HttpOnly" in cookie
    status, page = _get(base, cookie.split(";")[0])
    assert status == 200 and "My sister Anna lives in Lyon." in page
