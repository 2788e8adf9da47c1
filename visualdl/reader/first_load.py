"""The first load of a logdir of many runs: the charts a browser opens on first, first.

A sweep of 2,000 runs x 20 tags is 40M points in 2,000 small files; decoding all of them
takes a couple of seconds, but the page a user opens shows one tag first (the scalars
view's first chart: the first tag in name order, over every run). So the reader's first
load of many small files that can be read in two passes (a source's ``two_pass``: our record
files, see :mod:`visualdl.sources.ours.first_pass`) goes in two passes
(``LogReader.reload``):

1. every file is read once, and of its scalar-only records only the *priority tags* are
   decoded (the first tag of the first run read, plus any tag a request asked for while
   loading: ``LogReader.prioritize``); headers, hparams and every other record are handled
   whole, so runs, tags and hparams are all known at the end of this pass;
2. every file is read again up to where pass 1 stopped (from the page cache), and the
   series of the other tags are decoded; then the file is read on as usual.

Each file's priority set is fixed when its first pass starts, and the second pass takes
exactly the series the first left, so each series still receives its chunks in file
order. ``LogReader.scalar_pending(tag)`` says whether a tag still waits for points, so
that the server can flag a partial answer (``"loading": true``) and clients ask again.
"""

from __future__ import annotations

__all__ = ["MIN_FILES", "MAX_FILE_BYTES"]

#: Fewer such files than this are loaded in one pass: it is quick anyway.
MIN_FILES = 64
#: Larger files are read in one pass (a long run; or one whose series may spill to the
#: disk cache, which wants its points in one go).
MAX_FILE_BYTES = 4 << 20
