"""docs/adding_a_kind.md followed end to end: the files on that page are built into a
distribution, pip-installs it into a temporary folder, the page's example logs with it, and
the new kind is read back, served by the API, and drawn in its own tab in Chromium, without
any edit to visualdl.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.doc_package import installed_from_doc
from tests.helpers.http import Client
from tests.helpers.pages import PageWatch
from tests.helpers.server import serving
from visualdl import LogReader
from visualdl.kinds import registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding_a_kind.md"
KIND = "confusion_matrix"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The page's package, built and installed with pip into a folder put on sys.path."""
    root = tmp_path_factory.mktemp("plugin")
    with installed_from_doc(DOC, root, "vdl_confusion", registry.reset) as (site, files):
        yield root, site, files["example.py"]


@pytest.fixture(scope="module")
def logdir(installed):
    root, site, example = installed
    work = root / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", example], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return work / "runs"


def test_the_kind_is_registered_from_its_entry_point(installed):
    kind = registry.get(KIND)
    assert kind.plugin_entry and kind.package == "vdl_confusion"
    assert kind.part("api").blueprint.name == KIND
    assert KIND in registry.names()


def test_the_reader_reads_it_back(logdir):
    reader = LogReader(logdir)
    assert reader.tags("demo")[KIND] == ["val/confusion"]
    events = reader.events("demo", KIND, "val/confusion")
    assert [e.step for e in events] == [0, 1, 2]
    assert events[-1].matrix == ((7, 1), (2, 5)) and events[-1].labels == ("cat", "dog")
    assert reader.errors == 0


def test_a_reader_without_the_plugin_skips_its_entries(logdir, tmp_path):
    code = ("import sys, json; from visualdl import LogReader; r = LogReader(sys.argv[1]); "
            "print(json.dumps([r.tags('demo'), r.errors]))")
    done = subprocess.run([sys.executable, "-c", code, str(logdir)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[{}, 0]"


@pytest.fixture(scope="module")
def server(logdir):
    with serving(logdir) as handle:
        yield handle


def test_the_server_serves_it(server):
    client = Client(server.url)
    kinds = client.json("/api/kinds")["kinds"]
    entry = next(k for k in kinds if k["name"] == KIND)
    assert entry["views"] == [f"kinds/{KIND}/confusion.js"]
    view = client.get("/" + entry["views"][0])
    assert view.status_code == 200 and "registerView" in view.text
    assert view.headers["Content-Type"].startswith("text/javascript")
    assert client.json("/api/tags", kind=KIND)["runs"] == {"demo": ["val/confusion"]}
    body = client.json("/api/confusion_matrix", run="demo", tag="val/confusion")
    assert [e["matrix"] for e in body["entries"]] == [[[5, 1], [2, 7]], [[6, 1], [2, 6]],
                                                      [[7, 1], [2, 5]]]
    assert client.get("/api/confusion_matrix", run="demo", tag="nope").status_code == 404
    assert client.get(f"/kinds/{KIND}/missing.js").status_code == 404
    assert client.get("/kinds/image/images.js").status_code == 404  # built-ins live in static/


@pytest.mark.browser
def test_its_tab_draws_the_newest_matrix(browser, server, tmp_path):
    watch = PageWatch(browser.new_page())
    page = watch.page
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    try:
        page.goto(f"{server.url.rstrip('/')}/?tab=confusion")
        page.wait_for_selector("#tab-confusion[aria-selected=true]")
        page.wait_for_selector("table.confusion td")
        cells = page.locator("table.confusion td").all_text_contents()
        assert cells == ["7", "1", "2", "5"]
        assert "step 2" in page.locator("#main h3").inner_text()
        page.screenshot(path=str(tmp_path / "confusion.png"))
        watch.finish()
    finally:
        page.close()
    assert watch.errors == [] and warnings == []
