"""``python -m visualdl.reader PATH ...``: print a logdir's summary."""

import sys

from visualdl.reader.inspect import main

sys.exit(main(prog="python -m visualdl.reader"))
