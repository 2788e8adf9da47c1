from __future__ import annotations

import pytest

import visualdl


@pytest.fixture(autouse=True)
def no_run_left_open(tmp_path, monkeypatch):
    """Each test in a fresh cwd (runs go to ./vdl_runs), and no run left current after it."""
    monkeypatch.chdir(tmp_path)
    yield
    visualdl.finish()
