"""`visualdl --model ...` as a real process: serves the graph with or without a logdir."""

from __future__ import annotations

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.http import Client


def test_model_without_logdir(models):
    with start_cli("--model", str(models.cnn), str(models.control)) as cli:
        client = Client(cli.url)
        body = client.json("/api/graph/models")
        assert [m["name"] for m in body["models"]] == ["cnn.onnx", "control.onnx"]
        info = client.json("/api/info")
        assert info["logdirs"] == [] and info["reload_error"] is None
        summary = client.json("/api/graph/summary", model="file:0")
        assert summary["counts"]["nodes"] == 15
        done = cli.stop()  # SIGTERM: the CLI exits cleanly
    assert done.returncode == 0, done.stdout
    assert "stopped" in done.stdout


def test_model_with_logdir(models, graph_logdir):
    with start_cli("--logdir", str(graph_logdir), "--model", str(models.cnn)) as cli:
        sources = [m["source"] for m in Client(cli.url).json("/api/graph/models")["models"]]
        assert sources[0] == "file"
        done = cli.stop()
    assert done.returncode == 0, done.stdout


def test_missing_model_file_is_a_clear_error(tmp_path):
    """Told before the port is taken: the same error when another server holds the port."""
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        for model, told in ((tmp_path / "no.onnx", "model file does not exist"),
                            (tmp_path, "is a folder, not a model file")):
            result = run_cli("--model", str(model), "--port", port)
            assert result.returncode == 2, result.stderr
            assert "argument --model: " in result.stderr and told in result.stderr
            assert str(model) in result.stderr
            assert "cannot listen" not in result.stderr


def test_model_flag_repeated_keeps_every_model(models):
    """``--model a --model b`` (as docs/graph_diff.md writes it) serves both, in order."""
    with start_cli("--model", str(models.cnn), "--model", str(models.control)) as cli:
        body = Client(cli.url).json("/api/graph/models")
        assert [m["name"] for m in body["models"]] == ["cnn.onnx", "control.onnx"]
        cli.stop()


def test_neither_logdir_nor_model():
    result = run_cli()
    assert result.returncode == 2 and "--model" in result.stderr
