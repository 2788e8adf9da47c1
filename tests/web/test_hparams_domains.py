"""The HParams view over TensorFlow's hparams layout (``tests/kinds/hparams/data/tf_sweep``,
written by TensorFlow's own ``hparams`` API): every trial is a row with the metric columns
the parent folder's experiment declares, each hyper-parameter's header shows its declared
domain, and the parent folder is not in the run list."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.helpers.server import serving

pytestmark = pytest.mark.browser

DATA = os.path.join(os.path.dirname(__file__), "..", "kinds", "hparams", "data", "tf_sweep")


def test_domains_and_metric_columns_of_a_tf_sweep(watched, tmp_path):
    logdir = shutil.copytree(DATA, tmp_path / "tf_sweep")
    with serving([str(logdir)]) as handle:
        page = watched.page
        page.goto(f"{handle.url}?tab=hparams")
        page.wait_for_function(
            "() => document.querySelectorAll('.hp-table tbody tr').length === 8")
        heads = page.locator(".hp-table thead th").evaluate_all(
            "(ths) => ths.map((th) => [th.dataset.key, th.querySelector('.hp-domain')?.textContent ?? null])")
        assert dict(heads) == {
            "run": None, "h:dropout": "[0.1, 0.2]", "h:num_units": "{16, 32}",
            "h:optimizer": "{adam, sgd}", "m:accuracy": None, "m:validation/loss": None}
        cells = page.locator('.hp-table tbody tr[data-run="run-7"] td').all_text_contents()
        assert cells[3:] == ["0.77", "0.93"]  # accuracy at step 2; validation/loss
        runs = page.locator("[data-run]").evaluate_all("(es) => es.map((e) => e.dataset.run)")
        assert "tf_sweep" not in runs
        page.screenshot(path=str(tmp_path / "hparams_domains.png"), full_page=True)
        watched.finish()
