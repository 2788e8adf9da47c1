"""Writes ``data/tensorboardx/<version>/``: a small event file from one tensorboardX release.

Run once per release, each in a throwaway venv (Python 3.11, ``protobuf==3.20.3``,
``numpy==1.26.4``, ``six``), with the release installed on its own::

    python3 -m venv /tmp/tbx1 && /tmp/tbx1/bin/pip install 'protobuf<4' 'numpy<2' six
    /tmp/tbx1/bin/pip install --no-deps tensorboardX==$V --target /tmp/tbx1/v$V
    PYTHONPATH=/tmp/tbx1/v$V /tmp/tbx1/bin/python make_tensorboardx.py data/tensorboardx/$V

for V in 1.0 1.1 1.2 1.4 1.5 1.6 1.7 1.8 1.9 2.0 (1.3 was never on PyPI). Releases 1.7 and
later fail ``add_histogram`` under numpy 1.26 (``np.greater(..., dtype=np.int32)``), so
their files hold no histogram.
"""

import os
import sys

import numpy as np


def main(out: str) -> None:
    from tensorboardX import SummaryWriter

    w = SummaryWriter(out)
    rng = np.random.RandomState(0)
    for step in range(5):
        w.add_scalar("loss", 1.0 / (step + 1), step)
    try:
        w.add_histogram("weights", rng.randn(500), 3)
    except TypeError as exc:  # tensorboardX 1.7+ with numpy >= 1.2x
        print("no histogram:", exc)
    w.add_text("note", "hello", 4)
    w.close()
    print(os.listdir(out))


if __name__ == "__main__":
    main(sys.argv[1])
