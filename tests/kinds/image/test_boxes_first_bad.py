"""Of several bad boxes, the error names the first (in the caller's order) and that box's
first problem, whatever the later boxes' problems are."""

from __future__ import annotations

import numpy as np
import pytest

from visualdl.kinds.image.boxes import check_boxes


@pytest.mark.parametrize("boxes, message", [
    ([[0, 0, 5, 5], [0, 0, 101, 5], [np.nan, 0, 1, 1]], r"'t': box 1 \(0, 0, 101, 5\) lies outside"),
    ([[0, 0, 5, 5], [np.inf, 0, 1, 1], [5, 0, 4, 5]], r"'t': box 1 has a NaN or infinite"),
    ([[9, 0, 4, 5], [0, 0, 101, 5]], r"'t': box 0 \(9, 0, 4, 5\) has xmin > xmax"),
    ([[9, 0, 200, 5]], r"'t': box 0 \(9, 0, 200, 5\) lies outside"),
    ([[9, 0, 4, 500]], r"'t': box 0 .* has xmin > xmax"),  # inverted before outside
])
def test_the_first_bad_box_is_named(boxes, message):
    with pytest.raises(ValueError, match=message):
        check_boxes("t", boxes, None, None, 80, 100)


def test_good_boxes_pass_unchanged():
    found = check_boxes("t", [[0, 0, 100, 80], [10.5, 1, 20, 2]], None, None, 80, 100)
    assert found.boxes.tolist() == [[0, 0, 100, 80], [10.5, 1, 20, 2]]
    assert check_boxes("t", np.zeros((0, 4)), None, None, 80, 100).boxes.shape == (0, 4)
