"""``python -m visualdl.framework.distributed.launch [--nproc_per_node N] train.py ARGS``:
a training script run as N data-parallel ranks, as PaddlePaddle's
``python -m paddle.distributed.launch`` runs one (the launcher is
:mod:`visualdl.framework.distributed.script_launch`; ``spawn`` runs a function instead).

A module of its own, which the package does not import, so that running it with ``-m``
finds it unimported.
"""

import sys

from visualdl.framework.distributed.script_launch import main

if __name__ == "__main__":
    sys.exit(main())
