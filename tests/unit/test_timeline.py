"""The timeline's inputs on hand-made traces: hovers carry each bar's true start and duration, memory operations
get their own colour, and graph breaks are changes of compiled frame within one call."""

from typing import Any

from fusionviz.charts.style import CLASS_COLOURS
from fusionviz.charts.timeline import break_markers, timeline_bars, timeline_figure
from fusionviz.records.files import session_from_trace
from fusionviz.records.session import GraphBreak
from tests.unit.test_trace import calls_trace, ev, memory_trace, replay_trace


def test_hovers_show_true_start_and_duration_not_the_bars_end() -> None:
    session = session_from_trace(memory_trace(), "mem")
    fig = timeline_figure(session, timeline_bars(session))
    (gemm,) = [t for t in fig.data if t.name == "gemm"]
    assert "%{x" not in gemm.hovertemplate and "%{base" not in gemm.hovertemplate
    assert (gemm.customdata[0][8], gemm.customdata[0][9], gemm.customdata[0][10]) == (20, 40, 0)
    (memory,) = [t for t in fig.data if t.name == "memory"]
    assert (memory.marker.color, len(memory.customdata)) == (CLASS_COLOURS["memory"], 2)


def test_all_iterations_lay_bars_end_to_end_but_hover_their_own_start() -> None:
    session = session_from_trace(replay_trace(), "replay")
    bars = timeline_bars(session, all_iterations=True)
    copies = bars[(bars.lane == "kernel") & (bars.kind == "copy")]
    assert list(copies.at_us) == [30, 30, 30]
    # each iteration starts where the previous one's last event (graph_kernel_b, 55 + 10 µs in) ended
    assert list(copies.start_us) == [30, 65 + 30, 2 * 65 + 30]


def graph_break_trace() -> dict[str, Any]:
    """Two steps; in each, compiled frame 0 runs a graph, breaks on `.item()`, and frame 1 resumes inside it
    (as Dynamo runs a resumed frame: `Torch-Compiled Region: 1/0` inside `0/0`)."""
    events = []
    for step in range(2):
        t0 = 100 * step
        events += [
            ev(f"ProfilerStep#{step + 1}", "user_annotation", t0, 100),
            ev("Torch-Compiled Region: 0/0", "cpu_op", t0 + 5, 90),
            ev("## Call CompiledFxGraph abc ##", "user_annotation", t0 + 10, 30),
            ev("graph_0_cpp_fused_mul_0", "cpu_op", t0 + 12, 20),
            ev("aten::_local_scalar_dense", "cpu_op", t0 + 42, 3),
            ev("Torch-Compiled Region: 1/0", "cpu_op", t0 + 50, 40),
            ev("## Call CompiledFxGraph def ##", "user_annotation", t0 + 55, 30),
            ev("graph_1_cpp_fused_relu_0", "cpu_op", t0 + 60, 20),
        ]
    return {"traceEvents": events}


def test_a_change_of_compiled_frame_within_a_call_is_a_break() -> None:
    session = session_from_trace(graph_break_trace(), "gb")
    session.runs[0].graph_breaks = [GraphBreak("Tensor.item() call", "model.py:12 in forward: if x.item():")]
    markers = break_markers(session, timeline_bars(session))
    assert list(markers.x_us) == [10 + 30]  # where the graph before the break ended: eager code runs from there
    assert list(markers.reason) == ["Tensor.item() call"]
    every = break_markers(session, timeline_bars(session, all_iterations=True))
    assert len(every) == 2 and list(every.reason) == ["Tensor.item() call"] * 2


def test_calls_of_one_region_one_after_another_are_no_break() -> None:
    for iterations in ("steps", "calls"):
        session = session_from_trace(calls_trace(), "calls", iterations=iterations)  # type: ignore[arg-type]
        bars = timeline_bars(session, all_iterations=True)
        assert len(bars[bars.lane == "region"]) == 3
        assert break_markers(session, bars).empty
