"""The user's lines in a plain trace's stack traces, read into the kernel rows and drawn as the source view.

Two shapes torch writes, with its key names:
- `torch._inductor.profiler.inductor_trace_handler(dir)` (PyTorch after 2.13, with
  `torch._inductor.config.trace.provenance_tracking_to_timeline = True`) rewrites the exported trace so that
  each compiled kernel event (`"cat": "kernel"`) carries `args["stack"]`: the list of Inductor's stack traces
  for its kernel (`get_kernel_information_jsons()[region][kernel:handle]["stack_traces"]`, FX nodes'
  `meta["stack_trace"]` texts); it also numbers every event (`"uid"`) and marks the trace `"uid_assigned"`.
  tests/data/h200_branching_fp32_default_inductor_stacks.trace.json.gz is a real H200 trace given those keys
  (tests/data/README.md says how).
- torch 2.13's `torch.profiler._utils.map_recorded_events_to_aten_ops_with_stack_trace(trace)` (with
  `torch.fx.experimental._config.enrich_profiler_metadata`, env `TORCH_ENRICH_RPOFILER_STACK_TRACE=1`) gives
  each op run inside an FX graph's `## fx_generated_<hash>.py ##` and `## <node index> ##` markers
  `args["stack_trace"]` (one text) and `args["node_name"]`, on the CPU thread: the kernels it launched carry
  none, so their lines come from their launching op.
"""

from __future__ import annotations

from typing import Any

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels, kernel_table
from fusionviz.analysis.report import analyse
from fusionviz.analysis.source_view import has_sources, source_view
from fusionviz.charts.views import view_figure, view_problem
from fusionviz.records.files import open_file, open_path
from fusionviz.records.trace import parse_trace
from fusionviz.records.trace_pair import trace_pair
from tests.conftest import DATA, ROOT

MODEL = "/home/me/model.py"
STACKS = DATA / "h200_branching_fp32_default_inductor_stacks.trace.json.gz"
ZOO = "/work/main/fusionviz/measure/zoo.py"  # where the H200 session that trace comes from was recorded


def frame(line: int, code: str, file: str = MODEL, fn: str = "forward") -> str:
    """One frame of a stack trace as FX keeps it (Python's traceback text)."""
    return f'  File "{file}", line {line}, in {fn}\n    {code}\n'


def ev(name: str, cat: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": args}


def test_a_kernels_stack_and_a_launching_ops_stack_trace_become_its_lines() -> None:
    nested = frame(30, "return self.block(x)") + frame(12, "h = self.fc1(x)")  # innermost frame last
    trace = {"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("## fx_generated_abc.py ##", "cpu_op", 1, 90),
        ev("## 3 ##", "cpu_op", 2, 30),
        ev("aten::addmm", "cpu_op", 3, 20, stack_trace=nested, node_name="addmm", **{"External id": 1}),
        ev("cudaLaunchKernel", "cuda_runtime", 5, 5, correlation=11, stack_trace=nested, **{"External id": 1}),
        ev("gemm", "kernel", 30, 10, tid=7, correlation=11, stream=7, **{"External id": 1}),
        ev("triton_poi_fused_relu_0", "cpu_op", 40, 10, **{"External id": 2}),
        ev("cuLaunchKernel", "cuda_driver", 42, 5, correlation=12, **{"External id": 2}),
        ev("triton_poi_fused_relu_0", "kernel", 60, 20, tid=7, correlation=12, stream=7,
           stack=[frame(12, "h = self.fc1(x)"), frame(13, "h = torch.relu(h)"), frame(12, "h = self.fc1(x)")],
           **{"External id": 2}),
        ev("cudaLaunchKernel", "cuda_runtime", 50, 2, correlation=13),
        ev("odd", "kernel", 85, 1, tid=7, correlation=13, stack={"not": "a list"}, stack_trace=5),
        ev("cudaLaunchKernel", "cuda_runtime", 52, 2, correlation=14),
        ev("no_frame", "kernel", 90, 1, tid=7, correlation=14, stack=["model.py:7 in forward"]),
    ]}
    rows = parse_trace(trace).kernel_rows
    assert [r.source_lines for r in rows] == [[f"{MODEL}:12"], [f"{MODEL}:12", f"{MODEL}:13"], [], []]


def test_a_cpu_traces_ops_take_their_own_stack_trace() -> None:
    trace = {"traceEvents": [ev("ProfilerStep#1", "user_annotation", 0, 100),
                             ev("aten::mul", "cpu_op", 10, 20, stack_trace=frame(21, "y = x * 2")),
                             ev("aten::add", "cpu_op", 40, 20)]}
    assert [r.source_lines for r in parse_trace(trace).kernel_rows] == [[f"{MODEL}:21"], []]


def test_a_trace_from_inductors_handler_shows_each_line_with_its_kernels() -> None:
    run = open_path(STACKS).runs[0]
    kernels = iteration_kernels(run)
    lines = {r.name: r.source_lines for r in run.kernels}
    assert lines["triton_red_fused_addmm_gelu_mean_0"] == [f"{ZOO}:115", f"{ZOO}:113"]
    assert all(not ls for name, ls in lines.items() if not name.startswith("triton_"))  # library GEMMs: none
    assert has_sources(run)
    view = source_view(run, None).lines.set_index("line")
    assert list(view.index) == [113, 114, 115, 116]
    triton = kernels[kernels.name.str.startswith("triton_")]
    # Line 113 (`h = F.gelu(self.inp(x))`) went into all three reduction kernels, 114 (softmax) into the last.
    assert view.loc[113, "eager_kernels"] == 3
    assert view.loc[113, "eager_us"] == pytest.approx(triton.dur_us.sum())
    assert view.loc[114, "eager_names"] == [triton.name.iloc[-1]]
    assert view.loc[114, "eager_us"] == pytest.approx(triton.dur_us.iloc[-1])
    origins = kernel_table(run).set_index("name").origin
    assert origins["triton_red_fused_addmm_gelu_mean_0"] == "zoo.py:115, zoo.py:113"


def test_a_pair_of_plain_traces_gets_the_source_view_from_the_compiled_traces_stacks() -> None:
    recorded = open_path(ROOT / "sessions" / "h100_branching_512x256_float32.json.gz")
    eager_trace = recorded.run("eager").chrome_trace()
    assert eager_trace is not None
    eager = open_file(eager_trace, "eager.pt.trace.json")
    assert not has_sources(eager.runs[0])  # an eager trace carries no stacks
    report = analyse(trace_pair(eager, open_path(STACKS)))
    assert view_problem(report, "source") is None
    view = report.source_views["default"]
    compiled = iteration_kernels(report.session.runs[1])
    reductions = [i for i, name in enumerate(compiled.name) if name.startswith("triton_")]
    assert view.lines.set_index("line").loc[113, "compiled"] == reductions
    assert set(view.kernel_lines) == set(reductions)
    markers = [t for t in view_figure(report, "source").data if getattr(t, "mode", None) == "markers"]
    assert sum(len(t.x) for t in markers) == sum(len(lines) for lines in view.kernel_lines.values())
