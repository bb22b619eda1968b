"""The injectable text's number format: JS toFixed(2), computed without decimal (a hook's import cost)."""

from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given
from hypothesis import strategies as st

from memverbs.server.verbs.render import to_fixed_2


# Within decimal's default 28 digits (confidences are in [0, 1]).
@given(st.floats(min_value=-1e20, max_value=1e20) | st.sampled_from([0.005, 0.015, 0.125, 1.005, 2.675, -0.005, -0.0]))
def test_to_fixed_2_is_decimals_half_up_on_the_exact_float(value):
    assert to_fixed_2(value) == str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
