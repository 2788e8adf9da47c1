"""The command line: flags, errors, a real server process, Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

import visualdl
from visualdl import LogWriter
from visualdl.server import create_app
from visualdl.server.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"visualdl {visualdl.__version__}"


def test_defaults():
    args = build_parser().parse_args(["--logdir", "a", "b"])
    assert args.logdir == ["a", "b"] and args.host == "127.0.0.1" and args.port == 8040
    assert args.reload_interval > 0


@pytest.mark.parametrize(
    "argv", [[], ["--logdir"], ["--logdir", "x", "--port", "70000"], ["--logdir", "x", "--reload-interval", "0"]]
)
def test_bad_flags_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


def test_missing_logdir_is_a_clear_error(tmp_path, capsys):
    assert main(["--logdir", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_create_app_validates(tmp_path):
    with pytest.raises(FileNotFoundError):
        create_app(tmp_path / "nope")
    with pytest.raises(ValueError):
        create_app(tmp_path, reload_interval=0)


def test_inspect_subcommand(tmp_path, capsys):
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_scalar("loss", 1.0, step=0)
        path = w.file_name
    code = main(["inspect", path])
    assert isinstance(code, int) and code == 0
    assert capsys.readouterr().out


def _start(args: list[str], cwd: Path) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "visualdl", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        proc.kill()
        pytest.fail(f"no URL printed: {line!r}")
    return proc, match.group(0)


def test_python_m_visualdl_serves_and_exits_cleanly(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 0.5, step=1)
    proc, url = _start(["--logdir", str(tmp_path), "--port", "0", "--reload-interval", "0.2"], tmp_path)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if requests.get(url + "api/info", timeout=5).json()["loaded"]:
                break
            time.sleep(0.05)
        assert requests.get(url + "api/runs", timeout=5).json() == {"runs": ["run"]}
        assert "text/html" in requests.get(url, timeout=5).headers["Content-Type"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert "stopped" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_port_in_use_is_a_clear_error(tmp_path):
    proc, url = _start(["--logdir", str(tmp_path), "--port", "0"], tmp_path)
    try:
        port = url.rsplit(":", 1)[1].strip("/")
        env = dict(os.environ, PYTHONPATH=str(REPO))
        second = subprocess.run(
            [sys.executable, "-m", "visualdl", "--logdir", str(tmp_path), "--port", port],
            capture_output=True, text=True, timeout=20, env=env,
        )
        assert second.returncode == 1 and "cannot listen" in second.stderr
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
