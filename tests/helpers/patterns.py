"""Random regular expressions for the fuzz tests (issue 29): assembled from atoms, groups
nested up to six deep, alternations, repeats (huge counts included) and the constructs only
a backtracking engine runs (backreferences, lookarounds), seeded so a failure replays."""

from __future__ import annotations

import random

__all__ = ["random_regex"]

ATOMS = ["a", ".", r"\d", r"\w", "[a-z]", "[^_]", "x", "_", "é", r"\b", "^", "$"]
REPEATS = ["*", "+", "?", "{2}", "{1,}", "{0,1000}", "{4294967295}", "{1001}", "*?",
           "{99999999999999999999}"]
EXTRAS = [r"\1", "(?=a)", "(?!b)", "(?<=c)", "(?P=n)", "(?P<n>a)", "(?i)", "[", ")", "\x00"]


def random_regex(rng: random.Random, depth: int = 0, *, extras: bool = True) -> str:
    """One pattern; ``extras=False`` leaves out what is not JavaScript (``(?P...)``)."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.3 and depth < 6:
            inner = random_regex(rng, depth + 1, extras=extras)
            if rng.random() < 0.3:
                inner += "|" + random_regex(rng, depth + 1, extras=extras)
            part = "(" + inner + ")"
        elif roll < 0.4 and extras:
            part = rng.choice(EXTRAS)
        else:
            part = rng.choice(ATOMS)
        if rng.random() < 0.5:
            part += rng.choice(REPEATS)
        parts.append(part)
    text = "".join(parts)
    if depth == 0 and rng.random() < 0.1:  # deep nesting, past any sane pattern
        n = rng.choice([200, 600, 1200])
        text = "(" * n + text + ")" * n
    return text
