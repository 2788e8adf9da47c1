"""``%load_ext visualdl`` / ``%visualdl`` and ``visualdl.notebook.display`` in real notebooks:
executed by nbclient on an ipykernel kernel, their iframes opened in Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.pages import card_summary, wait_ready
from tests.notebook.conftest import LOSS_STEPS, pid_alive, registered_pids, write_scalars
from tests.notebook.jupyter import html_outputs, iframe_srcs, iframes, run_notebook, stream_text

psutil = pytest.importorskip("psutil")  # the test extra's; it finds the kernel's servers

LOCAL_SRC = re.compile(r"http://localhost:(\d+)/")


def servers_in(folder: Path) -> list[psutil.Process]:
    """The visualdl server processes running in ``folder`` (as the kernel started them)."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        cmdline = process.info["cmdline"] or []
        if process.info["cwd"] == str(folder) and cmdline[1:3] == ["-m", "visualdl"]:
            found.append(process)
    return found


def show_chart(frame) -> dict:  # noqa: ANN001 - a Playwright Page or Frame
    """Wait until the scalars view drew tag "loss"; its card summary."""
    wait_ready(frame, ["loss"])
    return card_summary(frame)["loss"]


@pytest.mark.browser
def test_magic_shows_the_dashboard_inline(jupyter, workdir, registry, hub, watched):
    nb = run_notebook(["%load_ext visualdl", "%visualdl --logdir runs"], workdir)
    cell = nb.cells[1]
    frames = iframes(cell)
    assert len(frames) == 1, cell.outputs
    port = int(LOCAL_SRC.fullmatch(frames[0]["src"]).group(1))
    assert frames[0]["height"] == "800" and frames[0]["width"] == "100%"
    assert f"Started visualdl on port {port}" in stream_text(cell)
    # the real command in a process of its own, recorded by PID, serving this logdir
    [pid] = registered_pids(registry)
    assert pid_alive(pid)
    assert psutil.Process(pid).cmdline()[1:5] == ["-m", "visualdl", "--logdir", "runs"]
    client = Client(f"http://127.0.0.1:{port}")
    assert client.json("/api/runs")["runs"] == ["train"]
    assert "frame-ancestors" not in client.get("/").headers["Content-Security-Policy"]

    page = watched.page
    page.goto(frames[0]["src"])
    chart = show_chart(page)
    assert chart["state"] == "ready" and "train" in chart["runs"]
    assert max(chart["points"]) == LOSS_STEPS

    # the cell's output as a notebook page shows it: on another origin, in its iframe
    page.goto(hub.add_page("/notebooks/run.html", html_outputs(cell)))
    frame = page.wait_for_selector("iframe.visualdl-frame").content_frame()
    chart = show_chart(frame)
    assert max(chart["points"]) == LOSS_STEPS
    watched.finish()


def test_same_arguments_reuse_the_server(jupyter, workdir, registry):
    write_scalars(workdir / "other", runs=("eval",))
    nb = run_notebook([
        "%load_ext visualdl",
        "%visualdl --logdir runs",
        "%visualdl --logdir ./runs/",  # the same folder: the same server
        "%visualdl --logdir other",
        "%visualdl --logdir no_such_dir",
        "%visualdl --path-prefix 'a b' --logdir runs",
        "%visualdl --help",
    ], workdir)
    first, again, other = (iframe_srcs(nb.cells[i]) for i in (1, 2, 3))
    assert first == again and len(first) == 1 and other != first
    port = LOCAL_SRC.fullmatch(first[0]).group(1)
    assert re.search(rf"Reusing visualdl on port {port} \(pid \d+\), started \d+ s ago",
                     stream_text(nb.cells[2]))
    assert len(registered_pids(registry)) == 2
    assert len(servers_in(workdir)) == 2  # one process per set of arguments
    # bad arguments: the command's own message, no iframe, no server
    missing, prefix, usage = nb.cells[4], nb.cells[5], nb.cells[6]
    assert iframes(missing) == [] and "no_such_dir" in stream_text(missing, "stderr")
    assert "does not exist" in stream_text(missing, "stderr")
    assert iframes(prefix) == [] and "path prefix" in stream_text(prefix, "stderr")
    assert "--path-prefix" in stream_text(usage) and "--logdir" in stream_text(usage)

    # another kernel (a restart, another notebook) reuses it too
    nb = run_notebook(["%load_ext visualdl", "%visualdl --logdir runs"], workdir)
    assert iframe_srcs(nb.cells[1]) == first
    assert f"Reusing visualdl on port {port}" in stream_text(nb.cells[1])
    assert len(servers_in(workdir)) == 2


def test_display_list_and_stop_from_code(jupyter, workdir, registry):
    nb = run_notebook([
        "import visualdl\nvisualdl.notebook.display(logdir='runs', height=450)",
        "servers = visualdl.notebook.list()\n"
        "print([(s.port, s.pid, s.args) for s in servers])",
        "print(visualdl.notebook.stop(servers[0].port), visualdl.notebook.list())",
    ], workdir)
    [frame] = iframes(nb.cells[0])
    assert frame["height"] == "450"
    port = int(LOCAL_SRC.fullmatch(frame["src"]).group(1))
    [pid] = registered_pids(registry) or [None]  # stopped already: the entry is gone
    assert pid is None
    listed = stream_text(nb.cells[1])
    match = re.fullmatch(r"\[\((\d+), (\d+), \('--logdir', 'runs'\)\)\]\n", listed)
    assert match and int(match.group(1)) == port
    assert stream_text(nb.cells[2]) == "True []\n"
    assert not pid_alive(int(match.group(2)))
    assert servers_in(workdir) == []


@pytest.mark.browser
def test_proxy_url_and_path_prefix_through_a_reverse_proxy(jupyter, workdir, registry, hub,
                                                           watched):
    template = f"{hub.url}/user/me/proxy/{{port}}/"
    nb = run_notebook([
        "%load_ext visualdl",
        f"import os\nos.environ['VISUALDL_PROXY_URL'] = {template!r}",
        "%visualdl --logdir runs --path-prefix /vdl",
    ], workdir)
    [src] = iframe_srcs(nb.cells[2])
    match = re.fullmatch(rf"{re.escape(hub.url)}/user/me/proxy/(\d+)/vdl/", src)
    assert match, src
    port = int(match.group(1))
    # the server answers under its prefix only
    direct = Client(f"http://127.0.0.1:{port}")
    assert direct.json("/vdl/api/runs")["runs"] == ["train"]
    moved = direct.session.get(direct.url + "/api/runs", allow_redirects=False)
    assert moved.headers["Location"] == "/vdl/api/runs"

    page = watched.page
    page.goto(src)
    chart = show_chart(page)
    assert max(chart["points"]) == LOSS_STEPS
    watched.finish()
    # every request of the dashboard went to the proxy under the iframe's path
    base = f"/user/me/proxy/{port}/vdl/"
    paths = [path for _, path in hub.requests]
    assert paths and all(path.startswith(base) for path in paths), paths
    forwarded = [path for p, path, status in hub.forwarded if p == port and status < 400]
    assert any(path.startswith("/vdl/api/scalars/batch") for path in forwarded)
    assert any(path.startswith("/vdl/static/js/app.js") for path in forwarded)


@pytest.mark.browser
def test_jupyterhub_uses_the_server_proxy(jupyter, workdir, registry, hub, watched):
    nb = run_notebook([
        "import os\nos.environ['JUPYTERHUB_SERVICE_PREFIX'] = '/user/me/'",
        "%load_ext visualdl\n%visualdl --logdir runs",
    ], workdir)
    [src] = iframe_srcs(nb.cells[1])
    port = int(re.fullmatch(r"/user/me/proxy/(\d+)/", src).group(1))
    # the notebook page on the hub's origin; the iframe goes through its proxy
    page = watched.page
    page.goto(hub.add_page("/user/me/notebooks/run.html", html_outputs(nb.cells[1])))
    frame = page.wait_for_selector("iframe.visualdl-frame").content_frame()
    chart = show_chart(frame)
    assert max(chart["points"]) == LOSS_STEPS
    watched.finish()
    assert any(p == port and path.startswith("/api/scalars/batch")
               for p, path, _ in hub.forwarded)
