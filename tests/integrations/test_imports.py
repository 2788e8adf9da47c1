"""Nothing of a trainer is imported until its integration is: ``import visualdl`` and
``import visualdl.integrations`` load none of torch, Lightning, Transformers or Keras, and
an integration whose library is missing says which extra to install. Fresh interpreters,
since other tests import these libraries."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

TRAINERS = ["torch", "lightning", "pytorch_lightning", "lightning_utilities", "transformers",
            "keras", "tensorflow", "accelerate"]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)


def test_importing_visualdl_and_its_integrations_imports_no_trainer():
    done = _run(
        "import json, sys\n"
        "import visualdl, visualdl.integrations, visualdl.integrations.common\n"
        "from visualdl import LogWriter\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {TRAINERS!r})))"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("module, blocked, extra", [
    ("lightning", "lightning", "lightning"),
    ("pytorch_lightning", "pytorch_lightning", None),
    ("transformers", "transformers", "transformers"),
    ("keras", "keras", "keras"),
])
def test_a_missing_library_names_the_extra(module, blocked, extra):
    # sys.modules[name] = None makes ``import name`` fail, installed or not
    done = _run(f"import sys; sys.modules[{blocked!r}] = None\n"
                f"import visualdl.integrations.{module}")
    assert done.returncode == 1
    assert f"ImportError: visualdl.integrations.{module} needs " in done.stderr
    hint = f"pip install 'visualdl[{extra}]'" if extra else "pip install pytorch-lightning"
    assert hint in done.stderr
