"""The command line: flags, errors, a real server process, Ctrl-C."""

from __future__ import annotations

import gc
import signal
import socket
import time

import pytest

import visualdl
from tests.helpers.cli import CliProcess, free_port, run_cli, start_cli
from tests.helpers.http import Client
from visualdl import LogWriter
from visualdl.server import create_app
from visualdl.server.cli import build_parser, main
from visualdl.server.listen import listen


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"visualdl {visualdl.__version__}"


def test_defaults():
    args = build_parser().parse_args(["--logdir", "a", "b"])
    assert args.logdir == ["a", "b"] and args.host == "127.0.0.1" and args.port == 8040
    assert args.reload_interval > 0
    # a repeated flag adds to the list (it replaced it: the first logdir was dropped)
    args = build_parser().parse_args(["--logdir", "a", "--logdir", "b", "c", "--model", "m",
                                      "--model", "n"])
    assert args.logdir == ["a", "b", "c"] and args.model == ["m", "n"]


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
    assert gc.isenabled()  # start-up pauses the collector; an early return must resume it


def test_create_app_validates(tmp_path):
    with pytest.raises(FileNotFoundError):
        create_app(tmp_path / "nope")
    with pytest.raises(ValueError):
        create_app(tmp_path, reload_interval=0)


def test_inspect_subcommand(tmp_path, capsys):
    with LogWriter(logdir=str(tmp_path)) as w:
        w.add_scalar("loss", 1.0, step=0)
        path = w.file_name
    from visualdl.cli import main as visualdl_main  # subcommands: dispatched above the server

    code = visualdl_main(["inspect", path])
    assert isinstance(code, int) and code == 0
    assert capsys.readouterr().out


def test_python_m_visualdl_serves_and_exits_cleanly(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 0.5, step=1)
    with start_cli("--logdir", str(tmp_path), "--reload-interval", "0.2", cwd=tmp_path) as cli:
        client = Client(cli.url)
        assert client.json("/api/runs")["runs"] == ["run"]
        assert "text/html" in client.get("/").headers["Content-Type"]
        done = cli.stop(signal.SIGINT)  # Ctrl-C
    assert done.returncode == 0, done.stdout
    assert "stopped" in done.stdout


def test_port_in_use_is_a_clear_error(tmp_path):
    with start_cli("--logdir", str(tmp_path), cwd=tmp_path) as cli:
        port = cli.url.rsplit(":", 1)[1]
        second = run_cli("--logdir", str(tmp_path), "--port", port, timeout=20)
        assert second.returncode == 1 and "cannot listen" in second.stderr
        assert cli.stop().returncode == 0


def test_listen_binds_literal_addresses_and_names():
    socks = listen("127.0.0.1", 0)
    try:
        assert len(socks) == 1 and socks[0].family == socket.AF_INET
        host, port = socks[0].getsockname()
        assert host == "127.0.0.1" and port > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # listening: the connection is accepted into the backlog
        with pytest.raises(OSError):
            listen("127.0.0.1", port)  # in use
    finally:
        for s in socks:
            s.close()
    named = listen("localhost", 0)
    try:
        assert named and {s.family for s in named} <= {socket.AF_INET, socket.AF_INET6}
        assert all(s.getsockname()[1] > 0 for s in named)
    finally:
        for s in named:
            s.close()
    with pytest.raises(OSError):
        listen("no-such-host.invalid", 0)


def test_listen_ipv6_literal():
    try:
        socks = listen("::1", 0)
    except OSError as err:
        pytest.skip(f"no IPv6 loopback here: {err}")
    try:
        assert socks[0].family == socket.AF_INET6
        assert socks[0].getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY) == 1
        assert socks[0].getsockname()[0] == "::1"
    finally:
        for s in socks:
            s.close()


# The app factory held until the test has connected (it creates the gate file), so that
# "while the server starts" is a window the test controls, not a race it hopes to win.
_SLOW_START = """
import os, sys, time
import visualdl.server.app as app_module
from visualdl.server.cli import main
fast = app_module.create_app
def slow(*args, **kwargs):
    deadline = time.monotonic() + 60
    while not os.path.exists(GATE) and time.monotonic() < deadline:
        time.sleep(0.01)
    return fast(*args, **kwargs)
app_module.create_app = slow
sys.exit(main(sys.argv[1:]))
"""


def test_a_request_sent_during_start_up_is_answered(tmp_path):
    """The port is bound before the app is built: a browser that connects while the server
    starts waits in the backlog and gets its answer, instead of a refusal."""
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 0.5, step=1)
    port = free_port()
    gate = tmp_path / "gate"
    cli = CliProcess("--logdir", str(tmp_path), "--port", str(port), cwd=tmp_path,
                     code=_SLOW_START.replace("GATE", repr(str(gate))))
    with cli:
        deadline = time.monotonic() + 20
        while True:
            try:  # refused until the port is bound; the app cannot be built before the gate
                conn = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline and cli.proc.poll() is None
                time.sleep(0.005)
        with conn:
            conn.sendall(b"GET /api/runs HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            assert cli.output == ""  # connected while it starts: it said nothing yet
            gate.touch()
            line = cli.first_line()
            reply = b"".join(iter(lambda: conn.recv(65536), b""))
        assert "serving at" in line
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.split(b" ")[1] == b"200", head
        assert b'"runs"' in body
        assert cli.stop().returncode == 0
