"""What a mode's CUDA graphs cover, on hand-made runs: the input copies per call read off the trace (count, µs,
bytes from the copy op's shapes and the inputs' element sizes), which compiled graphs were captured, skipped or
recorded again, what would avoid each cost, and the copies counted in the bytes a mode moves."""

from __future__ import annotations

import base64
import gzip
import json
from dataclasses import replace

import pytest

from fusionviz.analysis.cuda_graphs import avoid_words, coverage, coverage_fields, coverage_words, input_copies
from fusionviz.analysis.kernel_costs import session_costs
from fusionviz.records.session import CudaGraphs, GraphProvenance, ModeRun, RecordedGraph, TensorShape
from tests.unit.factories import k, run, session

SIDE = 4096
COPY = SIDE * SIDE * 4  # one float32 input of the chain


def _trace(ops: dict[int, tuple[str, list[object]]]) -> str:
    """A kept trace holding only the launching ops' recorded arguments."""
    events = [{"ph": "X", "cat": "cpu_op", "name": name, "ts": 0, "dur": 1, "pid": 1, "tid": 1,
               "args": {"External id": ext, "Input Dims": dims, "Input type": ["TensorList", "TensorList", "Scalar"]}}
              for ext, (name, dims) in ops.items()]
    return base64.b64encode(gzip.compress(json.dumps({"traceEvents": events}).encode())).decode()


def _graphs_run(copy_us: float = 37.0, inputs: list[TensorShape] | None = None) -> ModeRun:
    """reduce-overhead over two profiled iterations: the input copy, then the replayed fused kernel."""
    rows = []
    for i in range(2):
        rows += [k("void at::native::multi_tensor_apply_kernel<T>(T)", 100.0 * i, copy_us, iteration=i,
                   launch_op="aten::_foreach_copy_", op_id=10 + i),
                 k("triton_poi_fused_add_0", 100.0 * i + 50, 39.0, iteration=i)]
    graphs = run("reduce-overhead", rows)
    graphs.trace_gz_b64 = _trace({10 + i: ("aten::_foreach_copy_", [[[SIDE, SIDE]], [[SIDE, SIDE]], []])
                                  for i in range(2)})
    if inputs is not None:
        graphs.cuda_graphs = CudaGraphs(inputs=inputs)
    return graphs


def test_the_input_copy_is_counted_per_call_with_its_bytes_and_time() -> None:
    graphs = _graphs_run(inputs=[TensorShape([SIDE, SIDE], 4)])
    copies = input_copies(graphs)
    assert copies is not None and (copies.kernels, copies.us, copies.bytes) == (1.0, 37.0, COPY)
    assert copies.bytes_from == "inputs"


def test_without_the_inputs_a_zoo_models_copies_take_the_runs_dtype() -> None:
    graphs = _graphs_run()
    s = session(run("eager", []), graphs)
    s.config = replace(s.config, model="pointwise_chain", dtype="bfloat16")
    copies = input_copies(graphs, s)
    assert copies is not None and (copies.bytes, copies.bytes_from) == (SIDE * SIDE * 2, "dtype")
    s.config = replace(s.config, model="pkg.mod:factory")  # a user's model: its inputs' dtypes are not known
    unknown = input_copies(graphs, s)
    assert unknown is not None and (unknown.bytes, unknown.kernels) == (None, 1.0)


def test_a_mode_without_graphs_has_no_coverage() -> None:
    assert input_copies(run("default", [k("triton_poi_fused_add_0", 0, 1)])) is None
    assert coverage(run("default", [])) is None


def _wrapper(backward: bool) -> str:
    args = "primals_1, tangents_1" if backward else "primals_1, primals_2"
    return f"    def call(self, args):\n        {args} = args\n"


def test_coverage_names_the_skipped_graph_and_the_rerecorded_function() -> None:
    """Three compiled graphs: the second skipped for a mutated input, so the tree's function 0 is graph 0 and
    function 1 is graph 2 (the backward); function 0 was recorded twice, for two shapes."""
    graphs = _graphs_run(inputs=[TensorShape([SIDE, SIDE], 4)])
    graphs.output_code = [_wrapper(False), _wrapper(False), _wrapper(True)]
    graphs.provenance = [GraphProvenance(output_code=i) for i in range(3)]
    reason = "skipping cudagraphs due to mutated inputs (1 instances)"
    graphs.cuda_graphs = CudaGraphs(
        skips=[reason], skipped_graphs=[1], skip_count=1, non_static_inputs=3, inputs=[TensorShape([SIDE, SIDE], 4)],
        recorded=[RecordedGraph(0, "forward", ["4096x4096"]), RecordedGraph(1, "backward", ["4096"]),
                  RecordedGraph(0, "forward", ["2048x4096"])])
    found = coverage(graphs)
    assert found is not None and found.all_captured is False and found.recorded == 3
    assert [(g.graph, g.backward, g.captured, g.reason, g.recordings) for g in found.graphs] == [
        (0, False, True, "", 2), (1, False, False, reason, 0), (2, True, True, "", 1)]
    assert found.rerecorded == ("function 0: 4096x4096, 2048x4096",)
    assert "cudagraph_support_input_mutation" in found.avoid and "mark_static_address" in found.avoid
    assert "cudagraph_skip_dynamic_graphs" in found.avoid
    words = coverage_words(found)
    assert words.startswith(f"reduce-overhead: 1 not captured (graph 1: {reason})")
    assert words.endswith("; 1 input copy a call (67.1 MB, 37 µs).")
    fields = coverage_fields(found)
    assert fields is not None and fields["all_captured"] is False and fields["input_copies"] == {
        "kernels": 1.0, "us": 37.0, "bytes": COPY, "bytes_from": "inputs"}


def test_every_graph_captured_and_nothing_to_avoid() -> None:
    graphs = run("reduce-overhead", [k("triton_poi_fused_add_0", 0, 39.0)])
    graphs.output_code = [_wrapper(False)]
    graphs.provenance = [GraphProvenance(output_code=0)]
    graphs.cuda_graphs = CudaGraphs(recorded=[RecordedGraph(0, "inference", ["8x8"])])
    found = coverage(graphs)
    assert found is not None and found.all_captured and found.avoid == ""
    assert coverage_words(found) == "reduce-overhead: all captured (1 compiled graph); no input copies."
    assert avoid_words(None, (), ()) == ""


def test_a_session_recorded_before_the_coverage_says_it_cannot_tell() -> None:
    found = coverage(_graphs_run())
    assert found is not None and found.all_captured is None and found.recorded is None
    assert "was not recorded in this session" in coverage_words(found)


@pytest.mark.parametrize("itemsize", [4, 2])
def test_the_bytes_a_mode_moves_count_its_input_copies(itemsize: int) -> None:
    """The copy reads each input once and writes it once: twice its bytes, known now, where the profiler's
    tensor list alone (no dtypes) left it out."""
    graphs = _graphs_run(inputs=[TensorShape([SIDE, SIDE], itemsize)])
    costs = session_costs(session(run("eager", []), graphs), None)["reduce-overhead"]
    copy = costs.costs[0]
    assert copy is not None and (copy.read, copy.written, copy.total) == (SIDE * SIDE * itemsize,) * 2 + (
        2 * SIDE * SIDE * itemsize,)
