"""The ``visualdl`` command. ``visualdl [flags]`` serves the dashboard
(:mod:`visualdl.server.cli`); the subcommands are dispatched here, above the server, so
that the server knows none of them:

* ``visualdl inspect PATH ...``: a summary of logs (:mod:`visualdl.reader.inspect`);
* ``visualdl convert SRC DST``: other tools' logs copied into ours (:mod:`visualdl.convert`);
* ``visualdl export --format parquet LOGDIR OUT``: scalars and hyper-parameters as Parquet;
  ``--format html LOGDIR FILE``: the dashboard as one self-contained HTML file
  (:mod:`visualdl.export`).
"""

from __future__ import annotations

import sys
from typing import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``visualdl`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv else ""
    if command == "inspect":
        from visualdl.reader.inspect import main as run
    elif command == "convert":
        from visualdl.convert import main as run
    elif command == "export":
        from visualdl.export import main as run
    else:
        from visualdl.server.cli import main as serve

        return serve(argv)
    return int(run(argv[1:]) or 0)
