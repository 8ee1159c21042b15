"""arena.figures: a figure that rounds to zero never prints as a negative zero."""

from __future__ import annotations

import pytest

from arena.figures import fixed


@pytest.mark.parametrize(
    ("value", "places", "sign", "printed"),
    [
        (-0.0, 3, False, "0.000"),  # a negative zero, as -1 * 0.0 gives
        (-0.0, 4, True, "+0.0000"),
        (-1e-9, 3, True, "+0.000"),  # rounds to zero: no sign it does not have
        (-0.00049, 3, False, "0.000"),
        (-0.0012, 3, True, "-0.001"),  # a real negative keeps its sign
        (0.25, 2, True, "+0.25"),
        (0.7251, 3, False, "0.725"),
    ],
)
def test_fixed(value, places, sign, printed):
    assert fixed(value, places, sign) == printed
