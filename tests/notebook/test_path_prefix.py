"""``visualdl --path-prefix``: the app answers under the prefix only, and the browser app
uses relative URLs, so it works behind any proxy path. ``--allow-embedding`` lets other
pages frame it (notebooks); by default it refuses."""

from __future__ import annotations

import re

import pytest

from tests.helpers.cli import REPO, run_cli, start_cli
from tests.helpers.http import Client
from tests.helpers.pages import card_summary, wait_ready
from tests.notebook.conftest import LOSS_STEPS
from visualdl.api.common import BODY_LIMITS_CONFIG
from visualdl.server.app import create_app
from visualdl.server.prefix import normalize_prefix


def test_the_app_answers_under_its_prefix_only(workdir):
    # start_cli polls /api/info, outside the prefix: redirected into it
    with start_cli("--logdir", str(workdir / "runs"), "--path-prefix", "/vdl/x/") as cli:
        assert re.search(r"serving at http://127\.0\.0\.1:\d+/vdl/x/ ", cli.output)
        client = Client(cli.url)
        assert client.json("/vdl/x/api/runs")["runs"] == ["train"]
        page = client.get("/vdl/x/")
        assert page.status_code == 200 and 'src="static/js/app.js"' in page.text
        assert client.get("/vdl/x/static/js/app.js").status_code == 200
        # the prefix without its slash: to the page, by a relative Location (proxy-proof)
        bare = client.session.get(cli.url + "/vdl/x?tab=scalars", allow_redirects=False)
        assert bare.status_code == 307 and bare.headers["Location"] == "x/?tab=scalars"
        assert client.get("/vdl/x").url == cli.url + "/vdl/x/"  # followed
        # outside the prefix: sent into it (the bare address, an old bookmark or script)
        for path, location in [("/", "/vdl/x/"), ("/api/runs?a=1", "/vdl/x/api/runs?a=1"),
                               ("/a%20b/%C3%A9", "/vdl/x/a%20b/%C3%A9")]:
            moved = client.session.get(cli.url + path, allow_redirects=False)
            assert (moved.status_code, moved.headers["Location"]) == (307, location), path
        moved = client.session.get(cli.url + "//evil.example/", allow_redirects=False)
        assert moved.headers["Location"].startswith("/vdl/x/")  # never off this server
        assert client.json("/api/runs")["runs"] == ["train"]  # followed
        moved = client.post("/api/reload", allow_redirects=False)  # 307 keeps the method
        assert (moved.status_code, moved.headers["Location"]) == (307, "/vdl/x/api/reload")
        assert client.post("/api/reload").status_code == 202
        lost = client.get("/vdl/xy/api/runs")  # -> /vdl/x/vdl/xy/...: the app's JSON 404
        assert lost.status_code == 404 and "error" in lost.json()


def test_bad_prefixes_are_refused_by_name(workdir):
    for bad in ("/a/../b", "/a b", "/a//b", "/caf\u00e9", "/a?b"):
        done = run_cli("--logdir", str(workdir / "runs"), "--path-prefix", bad)
        assert done.returncode == 2, bad
        assert "argument --path-prefix: path prefix must be a URL path" in done.stderr
    assert normalize_prefix("/") == normalize_prefix("") == ""
    assert normalize_prefix("a/b/") == normalize_prefix("/a/b") == "/a/b"


def test_framing_is_refused_unless_allowed(workdir):
    runs = str(workdir / "runs")
    with start_cli("--logdir", runs) as plain, start_cli("--logdir", runs, "--allow-embedding") as embeddable:
        policy = Client(plain.url).get("/").headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy
        policy = Client(embeddable.url).get("/").headers["Content-Security-Policy"]
        assert "frame-ancestors" not in policy and "default-src 'self'" in policy


def test_body_limits_follow_the_prefix(workdir):
    """waitress checks a body's declared size against the raw request path: the graph
    upload's larger limit must be registered under the prefixed path."""
    app = create_app(workdir / "runs", path_prefix="/vdl", start_reload=False)
    limits = app.config[BODY_LIMITS_CONFIG]
    assert "/vdl/api/graph/upload" in limits
    assert limits["/vdl/api/graph/upload"] > app.config["MAX_CONTENT_LENGTH"]
    assert not any(not path.startswith("/vdl/") for path in limits)


ABSOLUTE = re.compile(r"""(["'`(]\s*)/(api|static|kinds)/""")


def test_the_web_app_uses_relative_urls_only():
    """Every URL in web/ is relative to the page: an absolute "/api/..." would miss the
    prefix of a proxy or of --path-prefix."""
    offenders = []
    for path in sorted((REPO / "web").rglob("*")):
        if path.suffix in (".js", ".html", ".css") and "vendor" not in path.parts:
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if ABSOLUTE.search(line) and not line.lstrip().startswith(("//", "*", "/*")):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []


@pytest.mark.browser
def test_dashboard_under_a_prefix_in_chromium(workdir, watched):
    with start_cli("--logdir", str(workdir / "runs"), "--path-prefix", "/deep/vdl") as cli:
        page = watched.page
        urls = []
        page.on("request", lambda request: urls.append(request.url))
        page.goto(cli.url + "/deep/vdl")  # redirected to the page's own folder
        assert page.url == cli.url + "/deep/vdl/"
        wait_ready(page, ["loss"])
        assert max(card_summary(page)["loss"]["points"]) == LOSS_STEPS
        watched.finish()
    assert urls and all(u.startswith(cli.url + "/deep/vdl") for u in urls if u.startswith("http"))
    assert any("/deep/vdl/api/scalars/batch" in u for u in urls)
