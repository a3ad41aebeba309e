"""`inspect`'s report and sentences on hand-made traces: the JSON contract (kernels and memory operations of one
iteration, kernels per step, kernels left out) and the wording for a trace without steps."""

import gzip
import json
from pathlib import Path

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels, kernel_table
from fusionviz.analysis.report import analyse
from fusionviz.analysis.sentences import per_iteration, trace_notes
from fusionviz.cli import main
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.files import session_from_trace
from tests.unit.test_trace import calls_trace, memory_trace, replay_trace


def test_json_lists_memory_operations_apart_from_kernels() -> None:
    (run,) = inspect_report(analyse(session_from_trace(memory_trace(), "mem")), "mem.json")["runs"]
    assert (run["kernels_per_iteration"], run["memory_ops_per_iteration"], run["steps"]) == (1.0, 2.0, [1])
    assert [k["class"] for k in run["kernels"]] == ["gemm"]
    assert run["memory_ops"] == [
        {"name": "Memcpy HtoD (Pageable -> Device)", "class": "memory", "duration_us": 10.0, "fused_ops": []},
        {"name": "Memset (Device)", "class": "memory", "duration_us": 4.0, "fused_ops": []}]
    assert (run["excluded_kernels"], run["iterations_from"], run["notes"]) == (0, "steps", [])


def test_json_counts_kernels_per_step_and_those_left_out() -> None:
    session = session_from_trace(replay_trace(), "replay")
    (run,) = inspect_report(analyse(session), "replay.json")["runs"]
    assert (run["steps"], run["excluded_kernels"], run["kernels_per_iteration"]) == ([3, 3, 3], 2 + 1, 3.0)
    assert run["notes"] == ["3 kernels launched outside the profiled steps are left out of every per-iteration "
                            "figure."]
    assert len(iteration_kernels(session.runs[0])) == 3  # the steady iteration draws one replay, not two


def test_kernel_table_shows_memory_operations_but_kernel_views_do_not() -> None:
    run = session_from_trace(memory_trace(), "mem").runs[0]
    assert list(kernel_table(run).kernel_class) == ["memory", "memory", "gemm"]
    assert list(kernel_table(run).start_us) == [20, 32, 40]
    assert list(iteration_kernels(run).kernel_class) == ["gemm"]


def test_whole_trace_and_per_call_wording() -> None:
    whole = session_from_trace(calls_trace(), "calls").runs[0].summary
    per_call = session_from_trace(calls_trace(), "calls", iterations="calls").runs[0].summary
    assert whole is not None and per_call is not None
    assert (per_iteration(whole), per_iteration(per_call)) == ("in the whole trace", "per call")
    assert trace_notes(whole) == [
        "The trace has no ProfilerStep, so it is read as one window: its figures are for the whole trace, not per "
        "iteration. It holds 3 top-level calls of one compiled region, and each can be taken as an iteration "
        "instead."]
    assert trace_notes(per_call) == [
        "Each of the 3 top-level calls of the compiled region is taken as an iteration (the trace has no "
        "ProfilerStep).",
        "1 memory operation launched outside the compiled-region calls is left out of every per-iteration figure."]


def test_inspect_text_of_a_trace_without_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "calls.json.gz"
    path.write_bytes(gzip.compress(json.dumps(calls_trace()).encode()))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "calls on cuda: the whole trace, 6 kernels and 1 memory operation, GPU busy" in out
    assert "per iteration" not in out.split("note:")[0]
    assert "note: The trace has no ProfilerStep" in out
    assert out.count("memory   ") == 1  # the memory operation's line, after the kernels


def test_a_grid_session_lists_its_cells_with_node_and_device(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from fusionviz.records.config import RunConfig
    from fusionviz.records.session import Environment, Grid, GridCell, Session

    cells = [GridCell(dim=64, batch=8, device="cuda:3", node="node-a"),
             GridCell(dim=128, batch=8, device="cuda:0", node="node-b", error="out of memory")]
    session = Session(config=RunConfig(model="mlp", modes=("eager", "default")), environment=Environment(),
                      grid=Grid(dims=[64, 128], batches=[8], cells=cells))
    where = ["dim", "batch", "node", "device", "error"]
    assert [{k: c[k] for k in where} for c in inspect_report(analyse(session), "grid.json")["cells"]] == [
        {"dim": 64, "batch": 8, "node": "node-a", "device": "cuda:3", "error": None},
        {"dim": 128, "batch": 8, "node": "node-b", "device": "cuda:0", "error": "out of memory"}]
    path = session.save(tmp_path / "grid.json.gz")
    assert main(["inspect", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("2 grid cells, default against eager"))
    assert lines[at + 1:at + 4] == ["  model dim batch  node    device mode     speedup     p10–p90  verdict",
                                    "  mlp    64     8  node-a  cuda:3 default        -           -  error",
                                    "  mlp   128     8  node-b  cuda:0 default        -           -  out of memory"]
