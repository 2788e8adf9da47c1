"""What ``SummaryWriter`` costs over ``LogWriter`` per ``add_scalar`` call.

    python bench/summary_writer.py            # 200,000 calls per writer, 3 repeats, medians
    python bench/summary_writer.py --quick    # 20,000 calls, 1 repeat: a smoke run

Rows: ``LogWriter``; ``SummaryWriter`` with torch's defaults (``max_queue=10`` is raised to
``LogWriter``'s buffer); and ``max_queue=10`` passed straight to ``LogWriter``, the hand-off
every 30 points that ``SummaryWriter`` avoids. Each time includes ``close()``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from visualdl import LogWriter, SummaryWriter  # noqa: E402


def _time(make, calls: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        writer = make(os.path.join(tmp, "run"))
        start = time.perf_counter()
        for step in range(calls):
            writer.add_scalar("loss", 0.5, step)
        writer.close()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, repeats = (20_000, 1) if args.quick else (200_000, 3)
    rows = [
        ("LogWriter (max_queue=4096)", lambda d: LogWriter(d)),
        ("SummaryWriter (torch defaults)", lambda d: SummaryWriter(d)),
        ("LogWriter (max_queue=10)", lambda d: LogWriter(d, max_queue=10)),
    ]
    print(f"{calls:,} add_scalar calls, median of {repeats}")
    print(f"{'writer':34s} {'seconds':>8s} {'M calls/s':>10s}")
    for name, make in rows:
        seconds = statistics.median(_time(make, calls) for _ in range(repeats))
        print(f"{name:34s} {seconds:8.3f} {calls / seconds / 1e6:10.2f}")


if __name__ == "__main__":
    main()
