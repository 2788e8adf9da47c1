"""Fixtures for the server tests: real log files written by LogWriter, a real server on a
free loopback port (waitress on a thread of this process, stopped by its handle)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import requests

from visualdl import LogWriter
from visualdl.server.api_common import provider
from visualdl.server.background import start_server

HOSTILE_RUN = "<script>alert(1)</script>"
HOSTILE_TAGS = ("../../etc/passwd", "<img src=x onerror=alert(1)>")
SPECIAL_VALUES = [1.0, math.nan, math.inf, -math.inf, 2.0]
LOSS_STEPS = 3000
SPIKE_STEP = 1234


def loss_value(step: int) -> float:
    """Smooth decay with one spike, so a downsampler that drops spikes is caught."""
    return 100.0 if step == SPIKE_STEP else 1.0 / (1.0 + step * 0.01)


def write_logs(root: Path) -> Path:
    """The standard logdir: train, eval and a run with a hostile name."""
    with LogWriter(logdir=str(root / "train")) as w:
        for step in range(LOSS_STEPS):
            w.add_scalar("loss", loss_value(step), step=step, walltime=1000.0 + step)
        for step in range(50):
            w.add_scalar("metrics/acc", step / 50, step=step * 10, walltime=1000.0 + step)
        for i, value in enumerate(SPECIAL_VALUES):
            w.add_scalar("special", value, step=i, walltime=2000.0 + i)
    with LogWriter(logdir=str(root / "eval")) as w:
        for step in range(30):
            w.add_scalar("loss", 0.5 - step / 100, step=step * 100, walltime=1000.0 + step)
    with LogWriter(logdir=str(root / HOSTILE_RUN)) as w:
        for tag in HOSTILE_TAGS:
            for step in range(3):
                w.add_scalar(tag, float(step), step=step, walltime=3000.0 + step)
    return root


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05):
    """Poll until ``predicate()`` is truthy; returns its value or fails the test."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        time.sleep(interval)


class Client:
    """requests against one server, with the base URL filled in."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = requests.Session()

    def get(self, path: str, **kw) -> requests.Response:
        return self.session.get(self.url + path, timeout=10, **kw)

    def post(self, path: str, **kw) -> requests.Response:
        return self.session.post(self.url + path, timeout=10, **kw)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    return write_logs(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def server(logdir):
    handle = start_server(logdir, reload_interval=0.2)
    provider(handle.app).wait_loaded(10)
    yield handle
    handle.stop()


@pytest.fixture(scope="module")
def client(server) -> Client:
    return Client(server.url)
