"""The comparison and the config filter in Chromium, on the runs of logs.py and a real
server: runs chosen in the run list, compared (differing keys only, then all), their
summaries and overlaid curves; the run table filtered and narrowed by config values."""

from __future__ import annotations

import json

from urllib.parse import parse_qs, urlparse

import pytest

from tests.helpers.server import serving
from tests.kinds.config.logs import write_config_runs

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(write_config_runs(tmp_path_factory.mktemp("cfg"))) as handle:
        yield handle


def _open(watched, url):
    page = watched.page
    page.goto(url)
    page.wait_for_selector('.run-list li[data-run="hp"]')
    page.wait_for_selector('.run-head button[data-sort="hp:model.depth"]')  # configs are in
    return page


def _keys(page):
    return page.eval_on_selector_all(".cmp-config tbody tr", "rows => rows.map(r => r.dataset.key)")


def _cells(page, key):
    return page.eval_on_selector_all(f'.cmp-config tr[data-key="{key}"] td',
                                     "cells => cells.map(c => c.textContent)")


def _stat(page, tag, run, stat):
    return page.text_content(f'.cmp-tag[data-tag="{tag}"] td[data-run="{run}"][data-stat="{stat}"]')


def test_compare_selected_runs(watched, server):
    page = _open(watched, server.url)
    page.uncheck('.run-list li[data-run="hp"] input[type=checkbox]')
    page.click("button[name=compare-runs]")
    page.wait_for_selector("#tab-compare[aria-selected=true]")
    page.wait_for_selector(".cmp-config tbody tr")
    assert parse_qs(urlparse(page.url).query)["compare"] == ["a", "b", "c"]
    page.wait_for_selector(".cmp-config[data-complete]")
    assert _keys(page) == ["batch", "model.depth", "model.layers.2", "note", "optim.lr",
                           "optim.name"]  # differences only, by default
    assert _cells(page, "model.depth") == ["12", "24", "12"]
    assert _cells(page, "note") == ["first", "–", "–"]
    assert page.is_checked("input[name=compare-diff-only]")

    page.uncheck("input[name=compare-diff-only]")
    page.wait_for_function("document.querySelectorAll('.cmp-config tbody tr').length === 9")
    assert _keys(page) == ["batch", "model.depth", "model.layers.0", "model.layers.1",
                           "model.layers.2", "note", "optim.lr", "optim.name", "seed"]
    same = page.eval_on_selector_all(".cmp-config tr.same", "rows => rows.map(r => r.dataset.key)")
    assert same == ["model.layers.0", "model.layers.1", "seed"]
    assert parse_qs(urlparse(page.url).query)["cmpall"] == ["1"]

    assert [_stat(page, "loss", run, "best") for run in "abc"] == ["1", "0.5", "3.25"]
    assert [_stat(page, "loss", run, "best_step") for run in "abc"] == ["20", "20", "30"]
    assert [_stat(page, "loss", run, "last") for run in "abc"] == ["1.5", "0.75", "3.25"]
    assert [_stat(page, "eval/acc", run, "max") for run in "abc"] == ["0.5", "0.9", "0.6"]
    assert [_stat(page, "eval/acc", run, "best_step") for run in "abc"] == ["15", "25", "5"]
    winner = page.get_attribute('.cmp-tag[data-tag="loss"] td.winner', "data-run")
    assert winner == "b"

    page.wait_for_selector('.cmp-chart[data-tag="loss"][data-state=drawn]')
    traces = page.eval_on_selector('.cmp-chart[data-tag="loss"]',
                                   "d => d.data.map(t => [t.meta.run, t.y.length])")
    assert traces == [["a", 4], ["b", 4], ["c", 4]]

    page.select_option('.cmp-tag[data-tag="loss"] select[name=direction]', "max")
    page.wait_for_function("""() => document.querySelector(
        '.cmp-tag[data-tag="loss"] td[data-run="c"][data-stat="best"]').textContent === '5'""")
    assert parse_qs(urlparse(page.url).query)["cmpdir"] == ["loss:max"]

    page.click('.cmp-config th.cmp-run[data-run="a"]')  # the run's details: whole config
    page.wait_for_selector('.cmp-details[data-run="a"] pre[data-part=config]')
    nested = json.loads(page.text_content('.cmp-details pre[data-part=config]'))
    assert nested == {"model": {"depth": 12, "layers": [64, 32]},
                      "optim": {"name": "adam", "lr": 0.001}, "seed": 1, "note": "first"}

    page.reload()  # the comparison is kept in the URL
    page.wait_for_selector(".cmp-config tbody tr")
    assert len(_keys(page)) == 9 and _stat(page, "loss", "a", "best") == "4"


def test_config_filter_and_differences_only(watched, server):
    page = _open(watched, server.url)
    shown = "() => [...document.querySelectorAll('.run-list li[data-run]')].map(l => l.dataset.run)"
    page.fill("input[name=run-where]", "model.depth>=12 optim.name=adam")
    page.wait_for_function(f"({shown})().join() === 'a,c'")
    page.fill("input[name=run-where]", "model.depth>12")
    page.wait_for_function(f"({shown})().join() === 'b'")
    page.fill("input[name=run-where]", "optim.lr<0.05 model.layers.2!=16")
    page.wait_for_function(f"({shown})().join() === 'a,b'")
    page.fill("input[name=run-where]", "")
    page.wait_for_function(f"({shown})().join() === 'a,b,c,hp'")

    columns = ("() => [...document.querySelectorAll('.run-head button[data-sort]')]"
               ".map(b => b.dataset.sort)")
    page.fill("input[name=run-filter]", "^[abc]$")
    page.wait_for_function(f"({shown})().join() === 'a,b,c'")
    assert "hp:seed" in page.evaluate(columns)
    page.check("input[name=run-diff-only]")
    page.wait_for_function(f"!({columns})().includes('hp:seed')")
    assert [c for c in page.evaluate(columns) if c.startswith("hp:")] == [
        "hp:batch", "hp:model.depth", "hp:model.layers.2", "hp:note", "hp:optim.lr",
        "hp:optim.name"]
    page.uncheck("input[name=run-diff-only]")
    page.wait_for_function(f"({columns})().includes('hp:seed')")


def test_filter_on_any_field_of_the_runs_api(watched, server):
    """Fields other parts add to /api/runs (a run's state) filter like config keys: the
    table's own functions, run in the page on the runs API's shapes."""
    page = _open(watched, server.url)
    got = page.evaluate("""async () => {
        const rc = await import('./static/js/shared/runconfig.js');
        const rt = await import('./static/js/shared/runtable.js');
        const base = {runs: ['a', 'b', 'c'], hparams: {}, metrics: {}};
        const shapes = [
          {runs: [{run: 'a', state: 'crashed'}, {run: 'b', state: 'running'},
                  {name: 'c', state: 'crashed'}]},
          {runs: ['a', 'b', 'c'], state: ['crashed', 'running', 'crashed']},
          {runs: ['a', 'b', 'c'], state: {a: 'crashed', b: 'running', c: 'crashed'}},
        ];
        return shapes.map((runs) => {
          const table = rc.withExtras(base, {config: null, runs});
          const rows = rt.indexTable(table);
          const test = rt.whereTest(rt.parseWhere('state=crashed'), table, rows);
          const nested = rc.runFields({runs: [{run: 'a', health: {nan_step: 5}}]}, rows, 3);
          return [table.runs.filter(test), nested];
        });
    }""")
    for runs, nested in got:
        assert runs == ["a", "c"]
        assert nested == {"health.nan_step": [5, None, None]}


def test_compare_from_a_charts_runs_menu(watched, server):
    page = _open(watched, server.url)
    menu = '.card[data-tag="loss"] details.card-runs'
    page.wait_for_selector(menu)
    page.click(f"{menu} > summary")
    page.wait_for_selector(f'{menu} input[value="hp"]')
    page.uncheck(f'{menu} input[value="c"]')
    page.uncheck(f'{menu} input[value="hp"]')
    page.click(f"{menu} button[name=compare-chart-runs]")
    page.wait_for_selector("#tab-compare[aria-selected=true]")
    page.wait_for_selector(".cmp-config tbody tr")
    assert parse_qs(urlparse(page.url).query)["compare"] == ["a", "b"]
    assert _keys(page) == ["model.depth", "note", "optim.name"]
    page.click("button[name=compare-close]")
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    assert page.locator("#tab-compare").count() == 0
    assert "compare" not in parse_qs(urlparse(page.url).query)


def test_a_long_config_table_fills_in_after_its_first_rows(watched, tmp_path):
    from visualdl import LogWriter

    for run, base in (("x", 0), ("y", 1)):
        with LogWriter(logdir=str(tmp_path / run)) as w:
            w.add_config({"k": {f"{i:03d}": base + i for i in range(90)}, "same": 1})
            w.add_scalar("loss", 1.0, 0)
    with serving(tmp_path) as handle:
        page = watched.page
        page.goto(handle.url + "?tab=compare&compare=x&compare=y")
        page.wait_for_selector(".cmp-config[data-complete]")
        keys = _keys(page)
        assert keys == [f"k.{i:03d}" for i in range(90)]
        assert _cells(page, "k.089") == ["89", "90"]
        watched.finish()
