"""The long fuzz run: many more seeded mutations than the CI test (tests/server/test_fuzz.py).

    python bench/fuzz.py                     # 5,000 cases or 10 minutes, whichever first
    python bench/fuzz.py --cases 200 --seconds 60 --flushes 100 --start 100000

Each case mutates a real record file (see ``mutate`` in the test module), reads it with
LogReader whole and in two steps, and opens it for resuming; it fails when reading raises,
loses a record that ends before the first damaged byte, traces more than the memory bound,
or when resuming cuts a record before the damage. Prints a table per mutation kind and the
seeds of failing cases (rerun one with ``--start SEED --cases 1``).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from tests.server.test_fuzz import MEMORY_BOUND, make_base, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--start", type=int, default=1000, help="first seed (the CI test uses 0..299)")
    parser.add_argument("--flushes", type=int, default=60, help="records in the base file / 2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = open(make_base(os.path.join(tmp, "base"), flushes=args.flushes), "rb").read()
        stats: dict[str, list] = collections.defaultdict(lambda: [0, 0, 0, 0])
        failing = []
        t0 = time.perf_counter()
        done = 0
        for seed in range(args.start, args.start + args.cases):
            if time.perf_counter() - t0 > args.seconds:
                break
            result = run_case(seed, base, tmp)
            done += 1
            for name in set(result.mutations):
                row = stats[name]
                row[0] += 1
                row[1] += bool(result.failures)
                row[2] = max(row[2], result.peak)
                row[3] += result.errors
            if result.failures:
                failing.append((seed, result.mutations, result.failures))
        elapsed = time.perf_counter() - t0
    print(f"{done} cases in {elapsed:.1f} s on a {len(base)}-byte base file "
          f"(seeds {args.start}..{args.start + done - 1}); memory bound {MEMORY_BOUND} bytes")
    print(f"{'mutation':<15}{'cases':>7}{'failed':>8}{'max peak KB':>13}{'errors/case':>13}")
    for name in sorted(stats):
        cases, failed, peak, errors = stats[name]
        print(f"{name:<15}{cases:>7}{failed:>8}{peak >> 10:>13}{errors / cases:>13.2f}")
    for seed, mutations, failures in failing[:20]:
        print(f"FAIL seed {seed} {mutations}: {'; '.join(failures)}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
