"""The kept Plotly element's Python side: a box drawn on the plot read back as an x range."""

from ui.web.plotly_view import box_of


def test_a_box_is_two_distinct_numbers_low_to_high() -> None:
    assert box_of([30.5, 10]) == (10.0, 30.5)
    assert box_of([5, 5]) is None and box_of([1]) is None and box_of(None) is None
    assert box_of(["a", 1]) is None and box_of({"x": [1, 2]}) is None
