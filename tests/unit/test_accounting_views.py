"""The accounting's views on hand-made runs: the waterfall's bars, the roofline's dots, the what-if estimate,
and every new registry entry drawn from a recorded H200 session."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.analysis.what_if import what_if
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.roofline import roofline_dots
from fusionviz.charts.view_captions import what_if_caption
from fusionviz.charts.views import view_figure
from fusionviz.charts.waterfall import waterfall_bars
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.files import open_path
from tests.unit.factories import session
from tests.unit.test_costs import _run, _trace
from tests.unit.test_ladder import DEFAULT, EAGER, GRAPHED

SHIPPED = Path(__file__).resolve().parents[2] / "sessions" / "h200_pointwise_chain_4096x4096_float32.json.gz"


def test_waterfall_bars_start_where_their_source_mode_is() -> None:
    s = session(EAGER, GRAPHED, DEFAULT, ms={"eager": [[0.100, 0.100, 0.100]], "eager_cuda_graph": [[0.05] * 3],
                                             "default": [[0.16] * 3]})
    bars = waterfall_bars(analyse(s))
    assert [b.label for b in bars] == ["eager", "→ eager_cuda_graph", "→ default"]
    assert (bars[0].base_us, bars[0].delta_us) == (0.0, pytest.approx(100.0))
    assert (bars[1].base_us, bars[1].delta_us) == (pytest.approx(100.0), pytest.approx(-50.0))
    assert bars[2].base_us == pytest.approx(100.0) and bars[2].delta_us == pytest.approx(60.0)
    assert bars[1].colour != bars[2].colour  # faster and slower


def test_roofline_dots_and_what_if_from_a_trace() -> None:
    eager = _run("eager", _trace([]))
    s = session(eager)
    s.ceilings = Ceilings("H200", "2.11", copy_gbps=4000.0, matmul_tflops={"float32": 50.0})
    dots = roofline_dots(analyse(s), None)
    # every kernel of the iteration with known bytes, eager only (no compiled mode ran), shares summing to one
    assert len(dots) == 4 and sum(d.share for d in dots) == pytest.approx(1.0)
    assert [d.tflops is not None for d in dots] == [True, True, False, False]
    # the trace's GELU and the Triton kernel launched by an op of no fusable kind: no chain of two
    found = what_if(s)
    # kernel time is the kernels' union: the split-K pair spans 16–48 µs and the other two run inside it
    assert found is not None and found.chains == [] and found.kernel_time_us == pytest.approx(32.0)
    assert "no chain of memory-bound kernels" in what_if_caption(analyse(s))


@pytest.mark.parametrize("view", ["waterfall", "roofline", "bound", "what_if"])
def test_the_new_views_draw_a_recorded_session(view: str) -> None:
    s = open_path(SHIPPED)
    figure = view_figure(analyse(s), view)
    assert figure.data and VIEWS[view].words(analyse(s), None)
