"""The kernel table's CSV download keeps names that look like spreadsheet formulas as text."""

from __future__ import annotations

import io

import pandas as pd

from ui.tables import csv_bytes


def test_formula_like_cells_become_text_and_numbers_stay_numbers() -> None:
    names = ["=HYPERLINK(\"http://x.invalid\")", "+1+1", "-2", "@SUM(A1)", "\t=1", "triton_poi_fused_add_0"]
    frame = pd.DataFrame({"name": names, "dur_us": [1.5, -2.0, 3.0, 4.0, 5.0, 6.0],
                          "fused_ops": [["add"], [], ["=x"], [], [], ["mul"]]})
    back = pd.read_csv(io.BytesIO(csv_bytes(frame)))
    assert list(back.name) == ["'" + n for n in names[:5]] + ["triton_poi_fused_add_0"]
    assert list(back.dur_us) == [1.5, -2.0, 3.0, 4.0, 5.0, 6.0]
    assert list(frame.name) == names  # the table on screen is not changed
