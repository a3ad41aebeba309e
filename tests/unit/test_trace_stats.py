"""The summaries profilers give (kernels ranked by total time with their duration distributions, and where each
iteration's GPU time went) and `inspect`'s text, on a hand-made trace with expected values as arithmetic."""

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.trace_stats import StepIdle, as_frame, idle_breakdown, kernel_ranking, percentile
from fusionviz.cli import main
from fusionviz.records.files import session_from_trace
from fusionviz.records.session import ModeRun
from tests.unit.test_trace import ev

ROOT = Path(__file__).resolve().parents[2]


def idle_trace() -> dict[str, Any]:
    """One 100 µs step. GPU: [10, 20) launched at 5; [25, 30) launched at 8 (queued before the GPU went idle at
    20); [45, 60) launched at 40 and, on another stream, [50, 70) launched at 41; a Memcpy at [75, 80) (not a
    kernel); [85, 90) linked to its op by External id only (no launch call)."""
    def launched(name: str, corr: int, launch_ts: float, start: float, dur: float, stream: int = 7) -> list[Any]:
        return [ev("cudaLaunchKernel", "cuda_runtime", launch_ts, 1, correlation=corr),
                ev(name, "kernel", start, dur, tid=stream, correlation=corr, stream=stream)]

    return {"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        *launched("nvjet_a", 1, 5, 10, 10),
        *launched("nvjet_a", 2, 8, 25, 5),
        *launched("triton_poi_fused_relu_0", 3, 40, 45, 15),
        *launched("nvjet_a", 4, 41, 50, 20, stream=8),
        ev("cudaMemcpyAsync", "cuda_runtime", 72, 1, correlation=5),
        ev("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 75, 5, tid=7, correlation=5, stream=7),
        ev("aten::relu", "cpu_op", 80, 3, **{"External id": 9}),
        ev("void at::native::vectorized_elementwise_kernel<4>()", "kernel", 85, 5, tid=7, stream=7,
           **{"External id": 9}),
    ]}


def run_of(trace: dict[str, Any]) -> ModeRun:
    return session_from_trace(trace, "t").runs[0]


def test_idle_breakdown_parts_add_up_to_the_span() -> None:
    (step,) = idle_breakdown(run_of(idle_trace()))
    assert step.kernel_us == 10 + 5 + (70 - 45) + 5  # the union: [45, 60) and [50, 70) overlap
    assert step.host_wait_us == (10 - 0) + (45 - 30) + (100 - 90)  # before [10,..), before [45,..), after the last
    assert step.between_kernels_us == 25 - 20  # [25, 30) had been launched at 8, before the GPU went idle at 20
    assert step.unattributed_us == 85 - 70  # its launch is not in the trace; the Memcpy is no kernel time
    assert step.span_us == 100 == step.kernel_us + step.host_wait_us + step.between_kernels_us + step.unattributed_us
    assert (step.kernels, step.busy_pct) == (5, 45.0)


def test_a_kernel_past_the_steps_end_stretches_the_span() -> None:
    trace = idle_trace()
    trace["traceEvents"][0]["dur"] = 82  # the step ends at 82; its last kernel (launched by an op at 80) at 90
    (step,) = idle_breakdown(run_of(trace))
    assert step.span_us == 90 and step.host_wait_us == 10 + 15


def test_kernels_ranked_by_total_time_with_their_distribution() -> None:
    first, *rest = kernel_ranking(run_of(idle_trace()))
    assert (first.name, first.kernel_class, first.count) == ("nvjet_a", "gemm", 3)
    assert first.total_us == 10 + 5 + 20
    assert first.pct_of_kernel_time == pytest.approx(100 * 35 / (35 + 15 + 5))
    assert (first.min_us, first.p50_us, first.max_us) == (5, 10, 20)
    assert first.p99_us == pytest.approx(10 + (20 - 10) * 0.98)  # rank 0.99 · (3 − 1) = 1.98
    assert [s.name for s in rest] == ["triton_poi_fused_relu_0", "void at::native::vectorized_elementwise_kernel<4>()"]
    assert [s.name for s in kernel_ranking(run_of(idle_trace()), top=1)] == ["nvjet_a"]
    assert "Memcpy DtoD (Device -> Device)" not in {s.name for s in kernel_ranking(run_of(idle_trace()))}


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 99) == pytest.approx(3 + 0.97)
    assert percentile([7.0], 99) == 7.0 and math.isnan(percentile([], 50))


def test_frames_for_the_app() -> None:
    frame = as_frame(idle_breakdown(run_of(idle_trace())), StepIdle)
    assert list(frame.busy_pct) == [45.0] and frame.columns[0] == "iteration"


def test_inspect_ranks_kernels_and_breaks_down_gpu_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "idle.json.gz"
    path.write_bytes(gzip.compress(json.dumps(idle_trace()).encode()))
    assert main(["inspect", str(path), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "top 1 of 3 kernels by total time over 1 iterations" in out
    assert "      35.0  63.6%      3     11.7      5.0     10.0     19.8     20.0  gemm             nvjet_a" in out
    assert "          0      100.0       45.0       35.0        5.0       15.0   45%" in out
    assert main(["inspect", str(path), "--json", "--top", "2"]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (len(run["top_kernels"]), run["distinct_kernels"], run["idle"][0]["host_wait_us"]) == (2, 3, 35.0)
    assert main(["inspect", str(path), "--top", "0"]) != 0


def test_inspect_into_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    path = tmp_path / "idle.json"
    trace = idle_trace()
    trace["traceEvents"] += [ev(f"nvjet_{i}", "kernel", 10, 1, tid=7, stream=7, **{"External id": 9})
                             for i in range(3000)]  # enough lines to fill the pipe
    path.write_text(json.dumps(trace))
    shell = f"{sys.executable} -m fusionviz inspect --all {path} | head -n 2"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.stderr == "" and done.returncode == 0
    assert len(done.stdout.splitlines()) == 2
