"""``python -m visualdl``: the same as the ``visualdl`` command."""

import sys

from visualdl.cli import main

if __name__ == "__main__":
    sys.exit(main())
