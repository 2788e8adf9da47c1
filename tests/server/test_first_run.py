"""A first run, as a new user meets it: the demo's first epoch, the README's test command,
the framework without its extra, the ``visualdl`` command's mistakes, the server handle's URL,
Ctrl-C on a background job and the licence the package says it has.

Each check runs the real thing in a child process (pytest, python, the CLI) or a real server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, CliProcess, cli_env, run_cli, start_cli
from tests.helpers.http import Client
from visualdl import LogWriter
from visualdl.server.background import start_server

requests = pytest.importorskip("requests")  # the test extra's

COMPILE_MESSAGE = "compiling kernels (once; cached for next runs)…"
TORCH_MISSING = "PyTorch is not installed (pip install torch; .ci/run installs the CPU wheel)"

# Two fits of a tiny MLP (the second must not repeat the message), then a third fit after an
# evaluate, all with the progress logger at the verbosity given in argv[1].
TINY_FIT = """
import sys
import numpy as np
import visualdl.framework as vf
from visualdl.framework import nn

vf.seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(48, 8)).astype("float32")
y = rng.integers(0, 3, size=48).astype("int64")
data = vf.data.TensorDataset(x, y)
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
model = vf.Model(net)
model.prepare(vf.optim.SGD(net.parameters(), 0.1), nn.CrossEntropyLoss(), vf.metric.Accuracy())
verbose = int(sys.argv[1])
model.fit(data, data, batch_size=16, epochs=2, verbose=verbose)
model.fit(data, batch_size=16, epochs=1, verbose=verbose)
print("fits done", flush=True)
"""


def _run_python(code: str, *args: str, env: dict[str, str] | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO,
                          env=env or cli_env(), capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- 12: the compile notice
def _tiny_fit(cache: Path, verbose: int) -> str:
    env = dict(cli_env(), NUMBA_CACHE_DIR=str(cache), NUMBA_NUM_THREADS="1")
    done = _run_python(TINY_FIT, str(verbose), env=env)
    assert done.returncode == 0, done.stderr
    assert "fits done" in done.stdout
    return done.stderr  # the progress logger writes to stderr


def test_first_fit_says_it_compiles_once_and_a_warm_cache_says_nothing(tmp_path):
    cold = _tiny_fit(tmp_path / "numba_cache", verbose=2)
    # One line, once per process: the message, then how long compiling took, then epoch 1.
    assert cold.count(COMPILE_MESSAGE) == 1, cold
    lines = cold.splitlines()
    assert re.fullmatch(re.escape(COMPILE_MESSAGE) + r" done in \d+\.\d s", lines[0]), lines
    assert lines[1].startswith("Epoch 1/2"), lines
    assert sum(line.startswith("Epoch 1/") for line in lines) == 2  # both fits logged
    assert any(Path(tmp_path / "numba_cache").rglob("*.nbi"))  # Numba wrote its cache
    warm = _tiny_fit(tmp_path / "numba_cache", verbose=2)
    assert COMPILE_MESSAGE not in warm and "done in" not in warm, warm
    assert warm.splitlines()[0].startswith("Epoch 1/2"), warm


def test_compile_notice_with_progress_bars(tmp_path):
    cold = _tiny_fit(tmp_path / "numba_cache", verbose=1)
    assert cold.count(COMPILE_MESSAGE) == 1, cold
    # The bar is cleared for the message and drawn again below it.
    after = cold.split(COMPILE_MESSAGE, 1)[1]
    assert re.match(r" done in \d+\.\d s\n", after), after[:200]
    assert "Epoch 1/2" in after and "3/3" in after


# ---------------------------------------------------------------- 13: skips for want of torch
# torch hidden in a pytest of its own (installed or not here): its import fails as a missing
# package's does, after the finders before it (the suite's own watch among them) saw it.
_HIDE_TORCH = """
import sys

class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Hide())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def test_skips_for_want_of_torch_have_one_reason_and_are_counted():
    # marked by the `torch` fixture (a whole module's, through its own fixture) and by
    # @pytest.mark.torch (over a module that imports torch in a try)
    selected = ["tests/framework/test_fw_optim.py::test_scheduler_values_match_pytorch",
                "tests/framework/test_fw_nn.py::test_batch_norm_running_stats_match_torch",
                "tests/framework/test_fw_ops.py::test_matches_pytorch_float32",
                "tests/kinds/graph/test_graph_torch.py"]
    done = _run_python(_HIDE_TORCH, "-q", "-rs", "-p", "no:cacheprovider", *selected)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    total = int(re.search(r"^(\d+) skipped in ", out, re.M).group(1))
    assert total > 70 and "passed" not in out.splitlines()[-1]
    assert f"{total} tests skipped: {TORCH_MISSING}" in out
    skips = re.findall(r"^SKIPPED \[(\d+)\] [^:]+(?::\d+)?: (.*)$", out, re.M)
    assert {reason for _, reason in skips} == {TORCH_MISSING}, skips
    assert sum(int(count) for count, _ in skips) == total


_TORCH_USES = """
import pytest

def test_unmarked_skip():
    pytest.importorskip("torch")

def test_unmarked_fallback():
    try:
        import torch  # noqa: F401
    except ImportError:
        pass

def test_unmarked_plain():
    assert True

@pytest.mark.torch
def test_marked():
    import torch  # noqa: F401

def test_by_fixture(torch):
    pass
"""


def test_a_test_that_reaches_for_torch_unmarked_fails_without_it(tmp_path):
    """``.ci/run``'s torch stage runs ``pytest -m torch``: a test that needs torch and is not
    marked would run in neither stage, so without torch it fails, naming the fix."""
    (tmp_path / "test_uses.py").write_text(_TORCH_USES)
    args = ["-p", "tests.conftest", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            str(tmp_path / "test_uses.py")]
    done = _run_python(_HIDE_TORCH, "-q", "-rfs", *args)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert re.search(r"^2 failed, 1 passed, 2 skipped in ", out, re.M), out
    assert "2 tests skipped: " + TORCH_MISSING in out
    failed = set(re.findall(r"^FAILED \S+::(\w+)", out, re.M))
    assert failed == {"test_unmarked_skip", "test_unmarked_fallback"}, out
    assert out.count("is not marked `torch`") >= 2, out
    listed = _run_python(_HIDE_TORCH, "-q", "--co", "-m", "torch", *args)
    assert re.findall(r"::(\w+)$", listed.stdout, re.M) == ["test_marked", "test_by_fixture"]


def test_no_torch_line_when_nothing_skipped_for_it():
    done = _run_python("import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))", "-q",
                       "-p", "no:cacheprovider",
                       "tests/server/test_cli.py::test_defaults")
    assert done.returncode == 0, done.stdout
    assert "PyTorch" not in done.stdout


# ---------------------------------------------------------------- 14: errors a new user meets
def test_framework_without_numba_names_the_extra():
    done = _run_python("import sys; sys.modules['numba'] = None\nimport visualdl.framework")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("ModuleNotFoundError: visualdl.framework needs numba, which is missing: "
                    "pip install 'visualdl[framework]'"), done.stderr


def test_logdir_that_is_a_plain_file_is_an_error(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a log\n")
    done = run_cli("--logdir", str(notes), "--port", "0", timeout=30)
    assert done.returncode == 2 and done.stdout == ""
    assert f"argument --logdir: {notes} is a file, not a log directory" in done.stderr


def test_logdir_that_is_a_record_file_is_served(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as writer:
        writer.add_scalar("loss", 0.5, step=1)
    (record,) = (tmp_path / "run").iterdir()
    assert "vdlrecords" in record.name
    with start_cli("--logdir", str(record)) as cli:
        client = Client(cli.url)
        assert client.json("/api/runs") and "loss" in str(client.json("/api/tags"))
        client.close()
        assert cli.stop().returncode == 0


@pytest.mark.parametrize("flag, value, message", [
    ("--port", "abc", "argument --port: port must be an integer between 0 and 65535, got 'abc'"),
    ("--port", "70000",
     "argument --port: port must be an integer between 0 and 65535, got '70000'"),
    ("--reload-interval", "soon",
     "argument --reload-interval: must be a positive number of seconds, got 'soon'"),
])
def test_bad_flag_values_are_explained_without_internal_names(tmp_path, flag, value, message):
    done = run_cli("--logdir", str(tmp_path), flag, value, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"visualdl: error: {message}"
    assert "_port" not in done.stderr and "_positive_float" not in done.stderr


def test_train_demo_help_is_whole_sentences():
    done = subprocess.run([sys.executable, "examples/train_demo.py", "--help"], cwd=REPO,
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert ("The visualdl demo: train a small CNN on scikit-learn's bundled 8x8 digits with "
            "vf.Model.fit and the VisualDL callback, then a short hyper-parameter sweep, all "
            "into one logdir") in text
    assert "python examples/train_demo.py --logdir demo_logs && visualdl --logdir demo_logs" \
        in done.stdout
    assert "first run on a machine also compiles" in text
    assert "``" not in done.stdout


def test_start_server_url_ends_with_a_slash_like_the_cli(tmp_path):
    handle = start_server(tmp_path)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", handle.url), handle.url
        page = requests.get(handle.url, timeout=10)
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert requests.get(handle.url + "api/info", timeout=10).json()["version"]
    finally:
        handle.stop()
    with start_cli("--logdir", str(tmp_path)) as cli:
        printed = cli.output.splitlines()[0]
        assert re.search(r"serving at http://127\.0\.0\.1:\d+/ ", printed), printed
        cli.stop()


# A shell starts a background job with SIGINT ignored; exec keeps it ignored, as in `visualdl &`.
AS_BACKGROUND_JOB = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.execv(sys.executable, [sys.executable, "-m", "visualdl", *sys.argv[1:]])
"""


def test_sigint_stops_a_server_started_with_sigint_ignored(tmp_path):
    with CliProcess("--logdir", str(tmp_path), "--port", "0", code=AS_BACKGROUND_JOB) as cli:
        Client(cli.wait_url()).json("/api/info")
        done = cli.stop(signal.SIGINT, timeout=10)
    assert done.returncode == 0, done.stdout
    assert done.stdout.rstrip().endswith("visualdl: stopped"), done.stdout


# ---------------------------------------------------------------- 15: the licence
def test_license_is_the_apache_2_text_the_metadata_names():
    text = (REPO / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n                           Version 2.0, "
                                    "January 2004")
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply" in text
    assert len(text) == 11358  # the unmodified text from apache.org/licenses/LICENSE-2.0.txt
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'license = "Apache-2.0"' in pyproject and 'license-files = ["LICENSE"]' in pyproject


def test_extras_that_train_bring_the_progress_bar():
    # The README's main job installs ".[framework,examples]"; without tqdm, fit fell back to
    # a line every ten steps (90 lines for the demo's first run).
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    for extra in ("framework", "cuda", "examples", "test"):
        assert any(req.startswith("tqdm") for req in extras[extra]), extra
