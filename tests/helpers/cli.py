"""The ``visualdl`` command line as a real process, the one way the tests launch it.

The child imports this checkout's ``visualdl`` (the repository root leads its PYTHONPATH,
whatever its working directory). A thread reads its output as it comes, so a chatty
server never blocks on a full pipe and a test never blocks on a silent one. Only the
process a test started is ever signalled, through its own Popen handle.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.http import Client, wait_for

__all__ = ["REPO", "CliProcess", "cli_env", "free_port", "run_cli", "start_cli"]

REPO = Path(__file__).resolve().parents[2]
_URL = re.compile(r"serving at (http://127\.0\.0\.1:\d+)/")


def cli_env(*paths: str | os.PathLike) -> dict[str, str]:
    """The environment for a child: this checkout first on PYTHONPATH, then ``paths`` (a
    plugin installed into a folder of its own)."""
    rest = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO), *map(str, paths), *([rest] if rest else [])]))


def free_port() -> int:
    """A loopback port free right now (for a test that must know the port beforehand)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_cli(*args: str, cwd: str | os.PathLike | None = None, timeout: float = 60,
            paths: tuple = ()) -> subprocess.CompletedProcess:
    """Run ``python -m visualdl *args`` to its end (for the ones that exit at once)."""
    return subprocess.run([sys.executable, "-m", "visualdl", *args], cwd=cwd, env=cli_env(*paths),
                          capture_output=True, text=True, timeout=timeout)


class CliProcess:
    """``python -m visualdl *args`` (or ``python -c code *args``), stdout and stderr merged."""

    def __init__(self, *args: str, cwd: str | os.PathLike | None = None,
                 code: str | None = None, paths: tuple = ()) -> None:
        program = ["-c", code] if code is not None else ["-m", "visualdl"]
        self.proc = subprocess.Popen([sys.executable, *program, *args], cwd=cwd,
                                     env=cli_env(*paths),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url: str | None = None
        self._lines: list[str] = []
        self._first: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="cli-output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if not self._lines:
                self._first.put(line)
            self._lines.append(line)
        self._first.put("")  # end of output: a waiter gets an empty line

    @property
    def output(self) -> str:
        return "".join(self._lines)

    def first_line(self, timeout: float = 30) -> str:
        """The first line printed, as soon as it is (empty if the process ended silently)."""
        try:
            return self._first.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no output within {timeout} s from {self.proc.args[1:]}")

    def wait_url(self, timeout: float = 30) -> str:
        """The URL from the "serving at" line, without its trailing slash."""
        line = self.first_line(timeout)
        match = _URL.search(line)
        if not match:
            self.kill()
            pytest.fail(f"no URL printed: {line!r}{self.output}")
        self.url = match.group(1)
        return self.url

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15) -> subprocess.CompletedProcess:
        """Signal the process (SIGTERM or SIGINT: the CLI then exits cleanly), wait for it,
        and return its exit status and whole output."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        finally:
            self.kill()
        self._reader.join(timeout)
        return subprocess.CompletedProcess(self.proc.args, code, self.output)

    def kill(self) -> None:
        """Kill the process if it still runs (cleanup; no output check)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "CliProcess":
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
        self._reader.join(5)  # the pipe ends with the process
        if not self._reader.is_alive():
            self.proc.stdout.close()


def start_cli(*args: str, cwd: str | os.PathLike | None = None,
              load_timeout: float = 20, paths: tuple = ()) -> CliProcess:
    """Start ``visualdl *args`` (``--port 0`` unless a port is given), wait until it prints
    its URL and reports its first load done; use it as a context manager. ``paths`` go on
    the child's PYTHONPATH after this checkout."""
    if "--port" not in args:
        args = (*args, "--port", "0")
    cli = CliProcess(*args, cwd=cwd, paths=paths)
    try:
        client = Client(cli.wait_url())
        wait_for(lambda: client.json("/api/info")["loaded"], timeout=load_timeout)
        client.close()
    except BaseException:
        cli.kill()
        raise
    return cli
