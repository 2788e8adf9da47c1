"""A regex from a request (issue 29, item 3): compiled by RE2 within bounds, refused with a
message that names it, and matched in linear time, so run grouping keeps its answers for
ordinary patterns and cannot be stalled by a backtracking one."""

from __future__ import annotations

import pytest

from visualdl.series.groups import GroupSpec, group_runs
from visualdl.series.patterns import MAX_LENGTH, PatternError, compile_pattern

# Long enough that a backtracking engine would need days for (.*)*X, (a+)+$ and the like.
LONG_NAMES = ["a" * 40 + "_b", "lr0.1_seed" + "1" * 40, "x" * 60 + "_seed3"]


@pytest.mark.parametrize("pattern, words", [
    ("x{4294967295}", "repeat count {4294967295} is over 1000"),
    ("x{1,99999999999999999999}", "repeat count {1,99999999999999999999} is over 1000"),
    ("(" * 1000 + "x" + ")" * 1000, f"longer than {MAX_LENGTH} characters"),
    ("x" * (MAX_LENGTH + 1), f"longer than {MAX_LENGTH} characters"),
    (r"(a)\1", "backreference"),
    (r"(?P<n>a)(?P=n)", "backreference"),
    ("(?=a)b", "lookahead"),
    ("(?<!a)b", "lookbehind"),
    ("(", "is not a valid regular expression"),
    ("a**", "is not a valid regular expression"),
])
def test_hostile_or_unsupported_patterns_are_refused_by_name(pattern, words):
    with pytest.raises(PatternError) as info:
        compile_pattern(pattern, "regex")
    message = str(info.value)
    assert message.startswith("regex ")
    assert words in message
    assert isinstance(info.value, ValueError)


def test_not_a_string_is_refused():
    with pytest.raises(PatternError, match="^regex must be a string$"):
        compile_pattern(["x"], "regex")


def test_an_escaped_brace_is_text_not_a_repeat_count():
    compiled = compile_pattern(r"x\{4294967295}", "regex")
    assert compiled.search("x{4294967295}").group(0) == "x{4294967295}"


@pytest.mark.parametrize("pattern", ["(.*)*X", "(a+)+$", "(a|a)*b", "(x+x+)+y", ".*.*.*.*.*=X"])
def test_backtracking_patterns_match_in_linear_time(pattern):
    """RE2 answers these at once over names that would take a backtracking engine forever:
    nothing to time, the call simply returns (``re`` would not within the test's life)."""
    groups = group_runs(LONG_NAMES, GroupSpec(regex=pattern), lambda r: None)
    assert sum(len(m) for m in groups.values()) == len(LONG_NAMES)


def test_ordinary_patterns_group_as_before():
    runs = ["lr0.1_seed0", "lr0.1_seed1", "lr0.01_seed0", "other"]
    by_seed = group_runs(runs, GroupSpec(regex=r"^(lr[\d.]+)_seed\d+$"), lambda r: None)
    assert by_seed == {"lr0.1": ["lr0.1_seed0", "lr0.1_seed1"], "lr0.01": ["lr0.01_seed0"],
                       "other": ["other"]}
    whole = group_runs(runs, GroupSpec(regex=r"seed"), lambda r: None)
    assert whole == {"seed": runs[:3], "other": ["other"]}
    named = group_runs(runs, GroupSpec(regex=r"(?P<lr>lr[\d.]+)_(?i:SEED)(\d)"), lambda r: None)
    assert named == {"lr0.1/0": ["lr0.1_seed0"], "lr0.1/1": ["lr0.1_seed1"],
                     "lr0.01/0": ["lr0.01_seed0"], "other": ["other"]}
    optional = group_runs(["a_x", "b"], GroupSpec(regex=r"^(a)?(?:_x)?"), lambda r: None)
    assert optional == {"a": ["a_x"], "": ["b"]}


def test_any_run_name_groups_even_an_undecodable_one():
    """A run folder whose name is not UTF-8 has surrogates in its str name: grouped, not a
    UnicodeEncodeError (the regex engine reads UTF-8)."""
    runs = ["r\udcff_seed0", "r\udcff_seed1", "é_seed0", "plain"]
    groups = group_runs(runs, GroupSpec(regex=r"^(.*)_seed\d+$"), lambda r: None)
    assert groups == {"r\udcff": runs[:2], "é": ["é_seed0"], "plain": ["plain"]}
    whole = group_runs(runs, GroupSpec(regex=r"é|\d"), lambda r: None)
    assert whole == {"0": ["r\udcff_seed0"], "1": ["r\udcff_seed1"], "é": ["é_seed0"],
                     "plain": ["plain"]}
    cut = group_runs(["\udcff_x"], GroupSpec(regex=r"^(.)"), lambda r: None)
    assert list(cut.values()) == [["\udcff_x"]]  # a part cut inside it is still a name
