"""``visualdl --path-prefix``: the app answers under the prefix only, and the browser app
uses relative URLs, so it works behind any proxy path. ``--allow-embedding`` lets other
pages frame it (notebooks); by default it refuses."""

from __future__ import annotations

import re

import pytest

from tests.helpers.cli import REPO, CliProcess, run_cli, start_cli
from tests.helpers.http import Client, wait_for
from tests.helpers.pages import card_summary, wait_ready
from tests.notebook.conftest import LOSS_STEPS
from visualdl.server.api_common import BODY_LIMITS_CONFIG
from visualdl.server.app import create_app
from visualdl.server.prefix import normalize_prefix


def start_prefixed(*args: str, prefix: str) -> CliProcess:
    """``visualdl *args --path-prefix PREFIX --port 0``, once its first load is done
    (``cli.url`` is the server's root, without the prefix)."""
    cli = CliProcess(*args, "--path-prefix", prefix, "--port", "0")
    try:
        client = Client(cli.wait_url() + "/" + prefix.strip("/"))
        wait_for(lambda: client.json("/api/info")["loaded"], timeout=20)
    except BaseException:
        cli.kill()
        raise
    return cli


def test_the_app_answers_under_its_prefix_only(workdir):
    with start_prefixed("--logdir", str(workdir / "runs"), prefix="/vdl/x/") as cli:
        assert re.search(r"serving at http://127\.0\.0\.1:\d+/vdl/x/ ", cli.output)
        client = Client(cli.url)
        assert client.json("/vdl/x/api/runs") == {"runs": ["train"]}
        page = client.get("/vdl/x/")
        assert page.status_code == 200 and 'src="static/js/app.js"' in page.text
        assert client.get("/vdl/x/static/js/app.js").status_code == 200
        # outside the prefix: a JSON 404 naming it
        missing = client.get("/api/runs")
        assert missing.status_code == 404
        assert missing.json() == {"error": "not found: this server answers under /vdl/x/"}
        assert client.get("/vdl/xy/api/runs").status_code == 404
        # the prefix without its slash: to the page, by a relative Location (proxy-proof)
        bare = client.session.get(cli.url + "/vdl/x?tab=scalars", allow_redirects=False)
        assert bare.status_code == 307 and bare.headers["Location"] == "x/?tab=scalars"
        root = client.session.get(cli.url + "/", allow_redirects=False)
        assert root.status_code == 307 and root.headers["Location"] == "/vdl/x/"
        assert client.get("/vdl/x").url == cli.url + "/vdl/x/"  # followed


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
    with start_prefixed("--logdir", str(workdir / "runs"), prefix="/deep/vdl") as cli:
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
