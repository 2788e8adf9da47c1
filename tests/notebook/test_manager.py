"""visualdl.notebook from code, in this process: starting, reusing, listing and stopping
servers, the registry's hygiene, argument errors, and where the iframe points."""

from __future__ import annotations

import json
import os
import signal
import socket

import pytest

import visualdl
from tests.helpers.http import Client, wait_for
from tests.notebook.conftest import pid_alive, registered_pids
from visualdl import notebook


def test_start_reuse_list_stop(registry, workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    info = notebook.start("--logdir runs")
    assert not info.reused and info.args == ("--logdir", "runs")
    assert Client(info.url).json("/api/runs")["runs"] == ["train"]
    assert registered_pids(registry) == [info.pid]

    # the same arguments, however written (a list, a path, an absolute path): reused
    for again in (["--logdir", "runs/"], f"--logdir {workdir / 'runs'}"):
        reused = notebook.start(again)
        assert reused.reused and (reused.port, reused.pid) == (info.port, info.pid)
    assert notebook.start(logdir=workdir / "runs").pid == info.pid
    assert notebook.start("runs").pid == info.pid  # bare folders are logdirs
    assert notebook.start(workdir / "runs").pid == info.pid
    # other arguments: another server
    other = notebook.start("--logdir runs --reload-interval 2")
    assert other.pid != info.pid and other.port != info.port
    assert [s.pid for s in notebook.list()] == [info.pid, other.pid]

    assert notebook.stop(info.port) is True
    assert not pid_alive(info.pid)
    assert [s.pid for s in notebook.list()] == [other.pid]
    assert notebook.stop(info.port) is False  # nothing there any more
    assert notebook.stop_all() == 1 and not pid_alive(other.pid)
    assert notebook.list() == []
    assert sorted(p.name for p in registry.iterdir()) == ["lock"]  # entries and logs gone


def test_a_dead_server_is_not_reused(registry, workdir):
    info = notebook.start(logdir=workdir / "runs")
    os.kill(info.pid, signal.SIGKILL)
    wait_for(lambda: not pid_alive(info.pid))
    assert notebook.list() == []  # its entry is dropped
    fresh = notebook.start(logdir=workdir / "runs")
    assert not fresh.reused and fresh.pid != info.pid
    assert Client(fresh.url).json("/api/runs")["runs"] == ["train"]


def test_an_entry_whose_port_does_not_answer_is_not_reused(registry, workdir):
    """A live process that is not (or no longer) a visualdl server on the recorded port."""
    info = notebook.start(logdir=workdir / "runs")
    entry = registry / f"{info.pid}.json"
    record = json.loads(entry.read_text())
    with socket.socket() as idle:  # a port that refuses connections
        idle.bind(("127.0.0.1", 0))
        record["port"] = idle.getsockname()[1]
    entry.write_text(json.dumps(record))
    fresh = notebook.start(logdir=workdir / "runs")
    assert not fresh.reused and fresh.pid != info.pid
    os.kill(info.pid, signal.SIGTERM)  # the registry no longer names its real port


def test_explicit_port_and_path_prefix(registry, workdir):
    from tests.helpers.cli import free_port

    port = free_port()
    info = notebook.start(["--logdir", str(workdir / "runs"), "--path-prefix", "tb/x/"],
                          port=port)
    assert (info.port, info.path_prefix) == (port, "/tb/x")
    assert info.url == f"http://127.0.0.1:{port}/tb/x/"
    assert Client(info.url).json("/api/runs")["runs"] == ["train"]


def test_bad_arguments_name_the_problem(registry, workdir):
    with pytest.raises(ValueError, match="--logdir is required"):
        notebook.start()
    with pytest.raises(ValueError, match="unrecognized arguments: --bogus"):
        notebook.start("--logdir runs --bogus")
    with pytest.raises(ValueError, match="port must be an integer between 0 and 65535"):
        notebook.start("--logdir runs --port 70000")
    with pytest.raises(ValueError, match="path prefix must be a URL path"):
        notebook.start("--logdir runs --path-prefix /a/../b")
    with pytest.raises(ValueError, match="is a file, not a log directory"):
        notebook.start(["--logdir", __file__])
    missing = workdir / "nothing here"
    with pytest.raises(RuntimeError, match="does not exist"):
        notebook.start(logdir=missing)
    with pytest.raises(ValueError, match="height must be a positive number"):
        notebook.display(logdir=workdir / "runs", height=0)
    with pytest.raises(ValueError, match="port must be an integer between 1 and 65535"):
        notebook.display(port="8040")
    with pytest.raises(ValueError, match="needs args"):
        notebook.display()
    assert registered_pids(registry) == []  # no server started by any of these


def test_display_outside_a_notebook_prints_the_address(registry, workdir, capsys):
    notebook.display(logdir=workdir / "runs", height=300)
    out = capsys.readouterr().out
    [info] = notebook.list()
    assert f"Started visualdl on port {info.port} (pid {info.pid})" in out
    assert f"visualdl dashboard: http://localhost:{info.port}/" in out
    notebook.display(port=info.port)
    assert capsys.readouterr().out == f"visualdl dashboard: http://localhost:{info.port}/\n"


def test_lazy_attribute_and_extension_entry_point():
    assert visualdl.notebook is notebook
    assert callable(visualdl.load_ipython_extension)

    registered = {}

    class Shell:
        def register_magic_function(self, func, magic_kind, magic_name):  # noqa: ANN001
            registered[magic_name] = (func, magic_kind)

    visualdl.load_ipython_extension(Shell())
    assert registered["visualdl"][1] == "line"


class TestFrameUrl:
    def test_direct_localhost(self, registry):
        assert notebook.frame_url(6123) == "http://localhost:6123/"
        assert notebook.frame_url(6123, "/vdl/x") == "http://localhost:6123/vdl/x/"
        assert notebook.frame_url(6123, host="0.0.0.0") == "http://localhost:6123/"
        assert notebook.frame_url(6123, host="10.1.2.3") == "http://10.1.2.3:6123/"

    def test_proxy_url_template(self, registry, monkeypatch):
        monkeypatch.setenv("VISUALDL_PROXY_URL", "https://hub.example.org/user/me/proxy/{port}/")
        assert notebook.frame_url(6123) == "https://hub.example.org/user/me/proxy/6123/"
        assert notebook.frame_url(6123, "/vdl") == "https://hub.example.org/user/me/proxy/6123/vdl/"
        monkeypatch.setenv("VISUALDL_PROXY_URL", "https://hub.example.org/proxy")  # no {port}
        assert notebook.frame_url(6123) == "https://hub.example.org/proxy/6123/"
        monkeypatch.setenv("VISUALDL_PROXY_URL", "https://x.test/p/{port}?token=a")
        assert notebook.frame_url(6123).startswith("https://x.test/p/6123")

    def test_jupyterhub(self, registry, monkeypatch):
        monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/me")
        assert notebook.frame_url(6123) == "/user/me/proxy/6123/"
        assert notebook.frame_url(6123, "/vdl") == "/user/me/proxy/6123/vdl/"
        monkeypatch.setenv("VISUALDL_PROXY_URL", "https://h.test/{port}/")  # the setting wins
        assert notebook.frame_url(6123) == "https://h.test/6123/"

    def test_server_proxy_under_a_jupyter_server(self, registry, monkeypatch):
        """jupyter-server-proxy installed and the kernel's parent a Jupyter server with a
        base URL: the proxy on that base URL; installed but no such parent (VS Code, a
        kernel started by other means): direct."""
        monkeypatch.setattr(notebook, "_server_proxy_installed", lambda: True)
        monkeypatch.setattr(notebook, "_parent_jupyter_base_url", lambda: "/lab-base/")
        assert notebook.frame_url(6123) == "/lab-base/proxy/6123/"
        monkeypatch.setattr(notebook, "_parent_jupyter_base_url", lambda: None)
        assert notebook.frame_url(6123) == "http://localhost:6123/"
        monkeypatch.setattr(notebook, "_server_proxy_installed", lambda: False)
        monkeypatch.setattr(notebook, "_parent_jupyter_base_url", lambda: "/lab-base/")
        assert notebook.frame_url(6123) == "http://localhost:6123/"


def test_started_servers_survive_their_starter(registry, workdir):
    """A server is a process of its own (its own session): it outlives the kernel that
    started it, which is what lets a restarted kernel reuse it."""
    from tests.helpers.cli import CliProcess

    code = ("import sys, visualdl.notebook as n; "
            "i = n.start(['--logdir', sys.argv[1]]); print(i.port, i.pid, flush=True)")
    with CliProcess(str(workdir / "runs"), code=code) as starter:
        port, pid = map(int, starter.first_line().split())
        assert starter.proc.wait(30) == 0
    assert pid_alive(pid) and os.getsid(pid) == pid
    again = notebook.start(logdir=workdir / "runs")
    assert again.reused and (again.port, again.pid) == (port, pid)
    assert notebook.stop(port) and not pid_alive(pid)
