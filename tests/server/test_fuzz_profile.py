"""Seeded fuzzing of the profiler's routes (issue 29): traces mutated with each class of
hostile input (values nested at random depths and places, numbers of every size and sign
in every field the parser reads, gzip'd traces inflating around the limit, file links to
anywhere), asked every route with hostile queries too (patterns, numbers past int64 and
float, empty and huge strings). Every answer:

* is never a 5xx, and is JSON (the download aside) with an ``error`` that says something
  when it is a 4xx;
* never holds the bytes of a file outside the logdir.

A fixed seed keeps the cases the same from run to run; ``SEED`` changes them.
"""

from __future__ import annotations

import gzip
import json
import os
import random

import pytest

from tests.helpers.http import client_of
from tests.kinds.profile import hostile
from visualdl.sources import torchtrace

SEED = int(os.environ.get("VISUALDL_FUZZ_SEED", "29"))
CASES = 36
SECRET = b"do-not-serve-3f1c"
KINDS = ("nest", "numbers", "both", "gzip", "link")
DEPTHS = (2, 63, 64, 65, 400, 990, 1001, 3000)
FIELDS = ('"ts": ', '"dur": ', '"pid": ', '"tid": ', '"Bytes": ', '"Total Allocated": ',
          '"Device Id": ', '"name": ', '"cat": ', '"ph": ', '"args": ')
NUMBERS = ("1" + "0" * 30, "-" + "9" * 400, "1e308", "-1.7e308", "1e400", "-1e-400", "NaN",
           "-Infinity", "0", "-0.0", "9223372036854775808", "18446744073709551616", "true",
           "null", '"12"', "[]", "{}")
QUERIES = {
    "span": ("all", "5", "-1", "1" * 25, "abc", "", "1e3"),
    "start": ("nan", "inf", "-1e400", "1e308", "0x10", "", "-0"),
    "end": ("nan", "1e309", "-1e308", "5", ""),
    "width": ("0", "16385", "1e3", "-5", "99999999999999999999", ""),
    "id": ("-1", "99999999999", "1e3", "2147483648", "0", ""),
    "q": (".*", "(", "\\", "%00", "ß", "a" * 5000, "", "ProfilerStep#", "[memory]"),
    "step": ("1" * 30, "-9223372036854775809", "5", "abc"),
    "group": ("name", "shapes", "x"),
    "limit": ("0", "5001", "1", "-3"),
}


def _nest(rng: random.Random, raw: bytes, depth: int) -> bytes:
    value = b"[" * depth + b"]" * depth if rng.random() < 0.5 else \
        b'{"a":' * depth + b"1" + b"}" * depth
    where = rng.choice(('"Input Dims": ', '"args": ', '"env": ', '"pid": ', '"name": '))
    at = [i for i in range(len(raw)) if raw.startswith(where.encode(), i)]
    if not at:
        return raw
    i = rng.choice(at) + len(where)
    end = _value_end(raw, i)
    return raw[:i] + value + raw[end:]


def _value_end(raw: bytes, i: int) -> int:
    """Where the JSON value starting at ``i`` ends (a scalar, or a bracketed value)."""
    if raw[i:i + 1] in (b"[", b"{"):
        level, j, in_str = 0, i, False
        while True:
            c = raw[j:j + 1]
            if in_str:
                in_str = c != b'"' or raw[j - 1:j] == b"\\"
            elif c == b'"':
                in_str = True
            elif c in (b"[", b"{"):
                level += 1
            elif c in (b"]", b"}"):
                level -= 1
                if level == 0:
                    return j + 1
            j += 1
    if raw[i:i + 1] == b'"':
        return raw.index(b'"', i + 1) + 1
    j = i
    while raw[j:j + 1] not in (b",", b"}", b"]"):
        j += 1
    return j


def _numbers(rng: random.Random, raw: bytes) -> bytes:
    for _ in range(rng.randint(1, 6)):
        field = rng.choice(FIELDS).encode()
        at = [i for i in range(0, len(raw), 1) if raw.startswith(field, i)][:400]
        if not at:
            continue
        i = rng.choice(at) + len(field)
        raw = raw[:i] + rng.choice(NUMBERS).encode() + raw[_value_end(raw, i):]
    if rng.random() < 0.3:
        raw = raw.replace(b"ProfilerStep#6", b"ProfilerStep#" + str(rng.choice(
            (10**18 - 1, 10**18, 2**63, 10**40))).encode())
    return raw


def _case(rng: random.Random, k: int, folder, outside) -> str:
    name = f"c{k:02d}"
    raw = hostile.base()
    kind = KINDS[k % len(KINDS)]  # every class in every run; the details drawn
    variant = k // len(KINDS)
    if kind in ("nest", "both"):
        depth = DEPTHS[variant % len(DEPTHS)] if kind == "nest" else rng.choice(DEPTHS)
        raw = _nest(rng, raw, depth)
    if kind in ("numbers", "both"):
        raw = _numbers(rng, raw)
    if kind == "link":
        targets = (outside / "secret.txt", outside / "valid.json", "/etc/hostname",
                   folder / "missing", folder / f"{name}.1.pt.trace.json",
                   folder / "c00.1.pt.trace.json", "../../outside/secret.txt")
        target = targets[variant % len(targets)]
        (folder / f"{name}.1.pt.trace.json").symlink_to(target)
        return name
    if kind == "gzip":
        data = gzip.compress(raw, 6)
        if variant % 4 in (1, 2):  # around the limit: blanks that compress a thousandfold
            size = int(torchtrace.MIN_LIMIT * (0.5 if variant % 4 == 1 else 1.2))
            data = gzip.compress(raw[:raw.rindex(b"]")] + b" " * size + b"]}", 9)
        elif variant % 4 == 3:  # cut, or with bytes after it
            data = data[:rng.randint(2, len(data))] if rng.random() < 0.5 else \
                data + os.urandom(rng.randint(1, 64))
        (folder / f"{name}.1.pt.trace.json.gz").write_bytes(data)
        return name
    (folder / f"{name}.1.pt.trace.json").write_bytes(raw)
    return name


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    rng = random.Random(SEED)
    base = tmp_path_factory.mktemp("fuzzprofile")
    outside, logdir = base / "outside", base / "logdir"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b'{"x": "' + SECRET + b'"}')
    (outside / "valid.json").write_bytes(hostile.base().replace(b"main", SECRET))
    folder = logdir / "fuzz"
    folder.mkdir(parents=True)
    names = [_case(rng, k, folder, outside) for k in range(CASES)]
    old = os.path.getmtime(folder) - 3600  # settled: broken ones are listed with their error
    for path in folder.iterdir():
        if not path.is_symlink():
            os.utime(path, (old, old))
    with client_of(logdir, timeout=60, load_timeout=120) as client:
        yield client, names, rng


def _query(rng: random.Random, route: str) -> dict[str, str]:
    query = dict(hostile.ROUTES[route]) if route in hostile.ROUTES else {}
    for key in rng.sample(sorted(QUERIES), rng.randint(0, 3)):
        query[key] = rng.choice(QUERIES[key])
    return query


def _not_json(literal: str) -> None:
    raise AssertionError(f"{literal} is not JSON")


def test_every_profile_route_answers_every_fuzzed_trace(fuzzed):
    client, names, rng = fuzzed
    listed = client.json("/api/tags", kind="profile")["runs"].get("fuzz", [])
    assert listed, "no fuzzed trace was listed"
    failures, errors = [], []
    for name in names + ["missing-tag"]:
        for route in [*hostile.ROUTES, "trace", ""]:
            for query in ({}, _query(rng, route)):
                path = f"/api/profile/{route}".rstrip("/")
                r = client.get(path, {"run": "fuzz", "tag": name, **query})
                where = f"{path} {name} {query}"
                if r.status_code >= 500 and r.status_code != 503:
                    failures.append(f"{where}: {r.status_code} {r.text[:200]}")
                    continue
                if SECRET in r.content:
                    failures.append(f"{where}: served a file outside the logdir")
                if route == "trace" and r.status_code == 200:
                    continue
                body = json.loads(r.content, parse_constant=_not_json)
                if r.status_code >= 400:
                    assert body.get("error"), where
                    errors.append(body["error"])
    assert not failures, "\n".join(failures[:20])
    # the classes did reach the parser: refused with their own reasons
    for why in (hostile.TOO_DEEP, hostile.BOMB, "not valid gzip"):
        assert any(why in e for e in errors), why
