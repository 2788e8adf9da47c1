"""``visualdl export --format html`` and ``GET /api/export/html``: the same report, and bad
input (an empty logdir, unknown runs or tags) answered with an error that names it, exit
code 2 or a 400, and no file written."""

from __future__ import annotations

import json
import os
import re
import stat

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.http import Client
from tests.helpers.server import serving


def _payload(page: str) -> dict:
    found = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', page,
                      re.S)
    return json.loads(found.group(1))


def test_cli_writes_the_report(logdir, tmp_path):
    out = tmp_path / "report.html"
    done = run_cli("export", "--format", "html", str(logdir), str(out), "--runs", "b",
                   "--tags", "loss", "--smoothing", "0.3")
    assert done.returncode == 0, done.stderr
    # b's loss is constant: each of 910 buckets (11 points wide) keeps one point, min = max
    assert "1 runs, 910 of 10,000 scalar points" in done.stdout
    data = _payload(out.read_text(encoding="utf-8"))
    assert data["runs"] == ["b"] and data["smoothing"] == 0.3
    assert [c["tag"] for s in data["scalars"]["sections"] for c in s["charts"]] == ["train/loss"]
    # readable by others as the umask allows, like any file the user writes (not mkstemp's 0600)
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


def test_cli_takes_a_saved_view(logdir, tmp_path):
    out = tmp_path / "view.html"
    view = "http://127.0.0.1:8040/?tab=scalars&off=a&tags=acc&smoothing=0.9"
    done = run_cli("export", "--format", "html", str(logdir), str(out), "--view", view)
    assert done.returncode == 0, done.stderr
    data = _payload(out.read_text(encoding="utf-8"))
    assert data["runs"] == ["b"] and data["smoothing"] == 0.9
    assert [c["tag"] for s in data["scalars"]["sections"] for c in s["charts"]] == ["eval/acc"]


@pytest.mark.parametrize("args, message", [
    (["--runs", "a", "ghost"], "unknown runs: 'ghost'"),
    (["--tags", "nothing_like_it"], "tags 'nothing_like_it' matches no tag"),
    (["--smoothing", "1.5"], "--smoothing: must be in [0, 1)"),
    (["--view", "http://x/?smoothing=oops"], "smoothing must be a number, not 'oops'"),
])
def test_cli_bad_input_writes_nothing(logdir, tmp_path, args, message):
    out = tmp_path / "report.html"
    done = run_cli("export", "--format", "html", str(logdir), str(out), *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_cli_empty_logdir_keeps_an_older_report(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "report.html"
    out.write_text("older", encoding="utf-8")
    done = run_cli("export", "--format", "html", str(empty), str(out))
    assert done.returncode == 2
    assert "the logdir holds no runs" in done.stderr
    assert out.read_text(encoding="utf-8") == "older"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "report.html"]


def test_route_answers_the_report_and_400s(logdir):
    with serving(logdir) as server:
        client = Client(server.url)
        ok = client.get("/api/export/html?tags=loss&off=a&smoothing=0.5")
        assert ok.status_code == 200
        assert ok.headers["Content-Disposition"] == 'attachment; filename="visualdl-report.html"'
        data = _payload(ok.text)
        assert data["runs"] == ["b"] and data["smoothing"] == 0.5
        assert data["scalars"]["points"] == {"kept": 910, "total": 10_000, "per_series": 2_000}
        for query, message in [("runs=ghost", "unknown runs: 'ghost'"),
                               ("tags=zzz", "tags 'zzz' matches no tag"),
                               ("smoothing=2", "smoothing must be in [0, 1)"),
                               ("step=x", "step must be an integer"),
                               ("smoothing=nan", "smoothing must be in [0, 1)"),
                               ("runFilter=(?=x)", "runFilter is refused: it uses a lookahead"),
                               ("tags=a{99999}", "tags is refused: its repeat count"),
                               ("off=a&off=b", "no run is left to show")]:
            bad = client.get(f"/api/export/html?{query}")
            assert bad.status_code == 400, query
            assert message in bad.json()["error"]
