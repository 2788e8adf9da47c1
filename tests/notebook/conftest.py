"""Fixtures of the notebook tests: an isolated registry of notebook servers (every server a
test starts is stopped at its end, by the PID the registry recorded), Jupyter folders of
the test's own with a kernelspec for this interpreter, a scalar logdir, the hub proxy."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers.cli import cli_env
from tests.notebook.jupyter import install_kernelspec
from tests.notebook.proxy import HubProxy
from visualdl import LogWriter

LOSS_STEPS = 200


def loss(step: int) -> float:
    return 1.0 / (1.0 + 0.05 * step)


def registered_pids(folder: Path) -> list[int]:
    """The PIDs of the servers recorded in a registry folder."""
    pids = []
    for path in folder.glob("*.json"):
        try:
            pids.append(int(json.loads(path.read_text())["pid"]))
        except (OSError, ValueError, KeyError):
            continue
    return pids


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (our own child, not yet reaped) is not alive
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def stop_pids(pids: list[int]) -> None:
    """SIGTERM each server, then SIGKILL what still runs 10 s later."""
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A registry folder of this test's own (VISUALDL_NOTEBOOK_DIR), no proxy settings;
    every server recorded in it is stopped at the end."""
    folder = tmp_path / "registry"
    monkeypatch.setenv("VISUALDL_NOTEBOOK_DIR", str(folder))
    # the servers started from this process import this checkout, whatever their folder
    monkeypatch.setenv("PYTHONPATH", cli_env()["PYTHONPATH"])
    for name in ("VISUALDL_PROXY_URL", "JUPYTERHUB_SERVICE_PREFIX", "JPY_PARENT_PID"):
        monkeypatch.delenv(name, raising=False)
    yield folder
    stop_pids(registered_pids(folder))


@pytest.fixture(scope="session")
def jupyter_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("jupyter")
    install_kernelspec(home / "share")
    return home


@pytest.fixture
def jupyter(jupyter_home: Path, registry: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Jupyter and IPython folders of the tests' own, the kernelspec on JUPYTER_PATH; the
    kernel inherits this environment (and so the registry)."""
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_home / "share"))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(jupyter_home / "config"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(jupyter_home / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(jupyter_home / "ipython"))
    return jupyter_home


def write_scalars(root: Path, runs: tuple[str, ...] = ("train",)) -> Path:
    for run in runs:
        with LogWriter(logdir=str(root / run)) as writer:
            for step in range(LOSS_STEPS):
                writer.add_scalar("loss", loss(step), step=step, walltime=1000.0 + step)
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The notebook's folder, holding a logdir ``runs`` (run "train", tag "loss")."""
    folder = tmp_path / "work"
    folder.mkdir()
    write_scalars(folder / "runs")
    return folder


@pytest.fixture
def hub() -> Iterator[HubProxy]:
    with HubProxy() as proxy:
        yield proxy
