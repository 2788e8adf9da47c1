"""`visualdl --model ...` as a real process: serves the graph with or without a logdir."""

from __future__ import annotations

import re
import subprocess
import sys

import requests


def _start(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "visualdl", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    match = re.search(r"serving at (http://127\.0\.0\.1:\d+)/", line)
    if not match:
        proc.kill()
        raise AssertionError(f"no URL in {line!r}")
    return proc, match.group(1)


def _stop(proc: subprocess.Popen) -> str:
    proc.terminate()  # SIGTERM: the CLI exits cleanly
    out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0, out
    return out


def test_model_without_logdir(models):
    proc, url = _start("--model", str(models.cnn), str(models.control))
    try:
        body = requests.get(url + "/api/graph/models", timeout=10).json()
        assert [m["name"] for m in body["models"]] == ["cnn.onnx", "control.onnx"]
        info = requests.get(url + "/api/info", timeout=10).json()
        assert info["logdirs"] == [] and info["reload_error"] is None
        summary = requests.get(url + "/api/graph/summary", params={"model": "file:0"}, timeout=10)
        assert summary.json()["counts"]["nodes"] == 15
    finally:
        out = _stop(proc)
    assert "stopped" in out


def test_model_with_logdir(models, graph_logdir):
    proc, url = _start("--logdir", str(graph_logdir), "--model", str(models.cnn))
    try:
        sources = [m["source"] for m in
                   requests.get(url + "/api/graph/models", timeout=10).json()["models"]]
        assert sources[0] == "file"
    finally:
        _stop(proc)


def test_missing_model_file_is_a_clear_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "visualdl", "--model", str(tmp_path / "no.onnx")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "model file does not exist" in result.stderr


def test_neither_logdir_nor_model():
    result = subprocess.run([sys.executable, "-m", "visualdl"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and "--model" in result.stderr
