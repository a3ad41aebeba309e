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
from fusionviz.charts.waterfall import MAIN_BRANCH, SIDE_BRANCH, waterfall_bars
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.files import open_path
from tests.unit.factories import session
from tests.unit.test_costs import _run, _trace
from tests.unit.test_ladder import DEFAULT, EAGER, GRAPHED

SHIPPED = Path(__file__).resolve().parents[2] / "sessions" / "h100_pointwise_chain_4096x4096_float32.json.gz"


def test_waterfall_bars_run_from_the_rung_before_to_their_own_latency() -> None:
    # eager 100 µs; the main ladder's graph rung 50 µs; default, on the side branch, 160 µs: it starts at eager's
    # latency, not at the graph rung's, and comes after the main ladder
    s = session(EAGER, GRAPHED, DEFAULT, ms={"eager": [[0.100, 0.100, 0.100]], "eager_cuda_graph": [[0.05] * 3],
                                             "default": [[0.16] * 3]})
    bars = waterfall_bars(analyse(s))
    assert [(b.mode, b.branch) for b in bars] == [("eager", MAIN_BRANCH), ("eager_cuda_graph", MAIN_BRANCH),
                                                  ("default", SIDE_BRANCH)]
    assert [(b.base_us, b.end_us) for b in bars] == [(0.0, pytest.approx(100.0)), (pytest.approx(100.0),
                                                     pytest.approx(50.0)), (pytest.approx(100.0), pytest.approx(160.0))]
    assert [b.label for b in bars] == ["eager: 100 µs", "eager_cuda_graph: 50 µs", "default: 160 µs"]
    # the whisker is the rung's own latency interval (every round alike here: none wide)
    assert all(b.low_us == pytest.approx(b.end_us) == pytest.approx(b.high_us) for b in bars)
    assert [b.change for b in bars] == ["eager", "faster", "slower"] and bars[1].colour != bars[2].colour


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
