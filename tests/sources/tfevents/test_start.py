"""The server's start path on event files: what its first read costs (no module it does not
need), and the quick GIL hand-overs that let that read overlap Flask's import, undone once
the first load is done."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.cli import cli_env, start_cli
from tests.helpers.http import Client, wait_for
from tests.sources.tfevents.tbwrite import EventWriter


def _log(path, steps: int = 2000) -> None:
    with EventWriter(str(path)) as w:
        for step in range(steps):
            for tag in ("loss", "acc", "lr"):
                w.add_scalar(tag, step / 7, step, 1e9 + step)


def test_the_first_read_imports_nothing_it_does_not_need(tmp_path):
    """Reading event files as the server does before Flask is imported: numpy.ma (which
    np.unique imports on its first call), importlib.metadata (plugins' kinds and sources:
    their entry points are looked up once the first load is done) and Flask stay out of
    it."""
    _log(tmp_path / "run")
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "from visualdl.server.reader_provider import open_provider\n"
        "from visualdl.sources import registry\n"
        "data = open_provider([sys.argv[1]], 5.0)\n"
        "seen = {}\n"
        "lookup = registry.load_plugins\n"
        "def watched():\n"
        "    seen['points'] = len(data.scalars('run', 'loss').steps)\n"
        "    seen['modules'] = sorted(set(sys.modules) - before)\n"
        "    return lookup()\n"
        "registry.load_plugins = watched\n"
        "data.reload_once()\n"
        "scalars = data.scalars('run', 'loss')\n"
        "print(json.dumps({'points': len(scalars.steps), 'before_plugins': seen}))\n"
    )
    got = _run(code, tmp_path)
    assert got["points"] == 2000
    # every point was in before the plugins' entry points were looked up
    assert got["before_plugins"]["points"] == 2000
    modules = set(got["before_plugins"]["modules"])
    assert "numpy" in modules or "numpy" in sys.modules  # it did read with numpy
    for name in ("numpy.ma", "importlib.metadata", "flask", "werkzeug", "PIL", "onnx",
                 "matplotlib", "numba"):
        assert name not in modules, name


def test_quick_handoffs_last_until_the_first_load(tmp_path):
    from visualdl.server import cli
    from visualdl.server.reader_provider import open_provider

    _log(tmp_path / "run")
    usual = sys.getswitchinterval()
    assert usual > cli.START_SWITCH_INTERVAL
    data = open_provider([str(tmp_path)], 5.0)
    try:
        cli._quick_handoffs_until_loaded(data)
        assert abs(sys.getswitchinterval() - cli.START_SWITCH_INTERVAL) < 1e-6
        data.start()
        assert data.wait_loaded(60)
        wait_for(lambda: sys.getswitchinterval() == usual, timeout=30)
        assert data.scalars("run", "acc").steps.tolist() == list(range(2000))
    finally:
        data.stop()
        cli._usual_handoffs()
    assert sys.getswitchinterval() == usual


def test_usual_handoffs_come_back_when_the_server_stops_first():
    """A provider still loading when the server stops: serve()'s end restores them."""
    import threading

    from visualdl.server import cli

    class StillLoading:
        gate = threading.Event()

        def wait_loaded(self, timeout=None):  # noqa: ANN001, ANN202
            return self.gate.wait(timeout)

    usual = sys.getswitchinterval()
    provider = StillLoading()
    try:
        cli._quick_handoffs_until_loaded(provider)
        assert abs(sys.getswitchinterval() - cli.START_SWITCH_INTERVAL) < 1e-6
        cli._usual_handoffs()
        assert sys.getswitchinterval() == usual
        cli._usual_handoffs()  # twice: nothing more
        assert sys.getswitchinterval() == usual
    finally:
        provider.gate.set()  # the waiting thread ends, and changes nothing
    assert sys.getswitchinterval() == usual


def test_cli_serves_every_point_of_an_event_file(tmp_path):
    """The whole start path, as a user runs it: ``visualdl --logdir`` on event files, and
    the first chart's request answers with all the points of the series."""
    _log(tmp_path / "run", 5000)
    with start_cli("--logdir", str(tmp_path)) as server:
        client = Client(server.url)
        body = client.json("/api/scalars?run=run&tag=acc&points=5000")
        assert body["total"] == 5000
        assert body["steps"][:3] == [0, 1, 2] and body["steps"][-1] == 4999
        assert abs(body["values"][7] - 1.0) < 1e-6
        client.close()


def test_start_up_objects_are_frozen_and_the_collector_resumes(tmp_path):
    """What start-up made (Flask, numpy, the reader) is frozen out of the collector's walks
    before it resumes; the collector is running again while the server serves."""
    _log(tmp_path / "run")
    code = (
        "import gc, json, sys\n"
        "import visualdl.server.cli as cli\n"
        "def serve(app, sockets, host, prefix=''):\n"
        "    from visualdl.api.common import provider\n"
        "    provider(app).wait_loaded(60)\n"
        "    print(json.dumps({'enabled': gc.isenabled(), 'frozen': gc.get_freeze_count(),\n"
        "                      'runs': provider(app).runs(), 'numpy': 'numpy' in sys.modules}))\n"
        "    for s in sockets:\n"
        "        s.close()\n"
        "    return 0\n"
        "cli.serve = serve\n"
        "sys.exit(cli.main(['--logdir', sys.argv[1], '--port', '0']))\n"
    )
    got = _run(code, tmp_path)
    assert got["enabled"] is True and got["numpy"] is True and got["runs"] == ["run"]
    assert got["frozen"] > 50_000  # Flask's, numpy's and the reader's objects


def _run(code: str, logdir) -> dict:
    """What ``code`` (run in a fresh interpreter with ``logdir`` as its argument) printed
    last, as JSON."""
    out = subprocess.run([sys.executable, "-c", code, str(logdir)], env=cli_env(),
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.splitlines()[-1])
